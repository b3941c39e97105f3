import { MOTORCYCLE_SUFFIX, textValue, withImageUrl } from './image-url.js';
import type { VehicleDocument } from './result-documents.js';
import type { XmlWriter } from '../xml/xml-writer.js';
import type { JsonSchema } from '../shared/json-schema.js';
import { writeComplex, type ResultCodec, type SchemaType, type XmlBinding } from './result-codec.js';
import { optional } from './xsd.js';

/**
 * Vehicle: the result of every Check<Country> (interface spec "Vehicle"). `vehicleJson` is the
 * stored document as JSON text; `vehicleData` is derived from it.
 */

/**
 * How a vehicleData child is typed and filled from the vehicleJson document:
 * - `integer`: simple content, written only when the document's value is a whole number;
 * - `decimal`: simple content, written only when the document's value is an xs:decimal;
 * - `text`: simple content, written when the document has a value;
 * - `pair`: CurrentValue (int) + CurrentTextValue (string), written when the document has the member.
 * Every child carries the optional `type` attribute of the spec. A child the document has nothing
 * for is left out (compat-notes "Wire differences" 4).
 */
export type VehicleDataKind = 'integer' | 'decimal' | 'text' | 'pair';

/** vehicleData's children in the spec's order: the encoder and the WSDL both follow it. */
export const VEHICLE_DATA_FIELDS: ReadonlyArray<{ readonly name: string; readonly kind: VehicleDataKind; readonly fallback?: string }> = [
  { name: 'ABICode', kind: 'integer' },
  { name: 'Description', kind: 'text' },
  { name: 'RegistrationYear', kind: 'integer' },
  { name: 'ManufactureYearFrom', kind: 'integer' },
  { name: 'ManufactureYearTo', kind: 'integer' },
  { name: 'CarMake', kind: 'pair' },
  // Live answers fill CarModel from ModelDescription when the record has only that (compat-notes 4).
  { name: 'CarModel', kind: 'text', fallback: 'ModelDescription' },
  { name: 'BodyStyle', kind: 'pair' },
  { name: 'EngineSize', kind: 'pair' },
  { name: 'NumberOfDoors', kind: 'pair' },
  { name: 'Transmission', kind: 'pair' },
  { name: 'FuelType', kind: 'pair' },
  { name: 'MakeDescription', kind: 'text' },
  { name: 'ModelDescription', kind: 'text' },
  { name: 'Immobiliser', kind: 'pair' },
  { name: 'NumberOfSeats', kind: 'pair' },
  // s:decimal in the original: generated proxies throw on anything else and lose the answer (compat-notes 3).
  { name: 'IndicativeValue', kind: 'decimal' },
  { name: 'DriverSide', kind: 'pair' },
];

const NIL: ReadonlyArray<readonly [string, string]> = [['xsi:nil', 'true']];
const INTEGER = /^[+-]?\d{1,18}$/;
/** The xs:decimal lexical space (XML Schema Part 2, 3.2.3.1). */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** The CurrentValue the record itself carries: an explicit whole number. */
function explicitCurrentValue(doc: VehicleDocument, member: string): string | undefined {
  const v = doc[member];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const explicit = (v as Record<string, unknown>).CurrentValue;
    if (typeof explicit === 'number' && Number.isInteger(explicit)) return String(explicit);
    if (typeof explicit === 'string' && INTEGER.test(explicit.trim())) return String(Number(explicit.trim()));
  }
  return undefined;
}

/**
 * The CurrentValue of a vehicleJson member. SOAP answers derive it from a whole-number text as
 * well (issue 3 "Results"); GET/POST answers hold only what the record has, as live ones do (a live
 * EngineSize of "1360" has no CurrentValue; compat-notes "Wire differences" 4).
 */
function currentValue(doc: VehicleDocument, member: string, text: string | undefined, binding: XmlBinding): string | undefined {
  const explicit = explicitCurrentValue(doc, member);
  if (explicit !== undefined || binding === 'http') return explicit;
  if (text !== undefined && INTEGER.test(text) && Math.abs(Number(text)) <= 2147483647) return String(Number(text));
  return undefined;
}

/**
 * vehicleData, derived from the vehicleJson document (issue 3 "Results"): only the children the
 * record has a value for; inside a pair that is present, SOAP writes an empty CurrentValue or
 * CurrentTextValue as xsi:nil (the spec) and GET/POST leave it out (live answers).
 */
function writeVehicleData(w: XmlWriter, doc: VehicleDocument, binding: XmlBinding): void {
  const children: Array<() => void> = [];
  for (const field of VEHICLE_DATA_FIELDS) {
    const text = textValue(doc, field.name) ?? (field.fallback === undefined ? undefined : textValue(doc, field.fallback));
    switch (field.kind) {
      case 'integer':
        if (text !== undefined && INTEGER.test(text)) children.push(() => w.leaf(field.name, String(BigInt(text))));
        break;
      case 'decimal':
        if (text !== undefined && DECIMAL.test(text)) children.push(() => w.leaf(field.name, text));
        break;
      case 'text':
        if (text !== undefined) children.push(() => w.leaf(field.name, text));
        break;
      case 'pair': {
        const value = currentValue(doc, field.name, text, binding);
        if (value === undefined && text === undefined) break;
        children.push(() => {
          w.open(field.name);
          if (value !== undefined) w.leaf('CurrentValue', value);
          else if (binding === 'soap') w.empty('CurrentValue', NIL);
          if (text !== undefined) w.leaf('CurrentTextValue', text);
          else if (binding === 'soap') w.empty('CurrentTextValue', NIL);
          w.close();
        });
        break;
      }
    }
  }
  writeComplex(w, 'vehicleData', [], children.length === 0, () => {
    for (const write of children) write();
  });
}

/** The optional `type` attribute every vehicleData child carries (interface spec). */
function typeAttribute(w: XmlWriter): void {
  w.empty('s:attribute', [['name', 'type'], ['type', 's:NCName']]);
}

function simpleContent(w: XmlWriter, name: string, base: string): void {
  w.open('s:element', [['minOccurs', '0'], ['maxOccurs', '1'], ['name', name]]);
  w.open('s:complexType').open('s:simpleContent').open('s:extension', [['base', base]]);
  typeAttribute(w);
  w.close().close().close().close();
}

const VEHICLE_TYPE: SchemaType = {
  name: 'Vehicle',
  write(w) {
    w.open('s:complexType', [['name', 'Vehicle']]).open('s:sequence');
    w.empty('s:element', optional('vehicleJson', 's:string'));
    w.open('s:element', [['minOccurs', '0'], ['maxOccurs', '1'], ['name', 'vehicleData']]);
    w.open('s:complexType').open('s:sequence');
    for (const field of VEHICLE_DATA_FIELDS) {
      switch (field.kind) {
        case 'integer':
          simpleContent(w, field.name, 's:integer');
          break;
        case 'decimal':
          simpleContent(w, field.name, 's:decimal');
          break;
        case 'text':
          simpleContent(w, field.name, 's:string');
          break;
        case 'pair':
          w.open('s:element', [['minOccurs', '0'], ['maxOccurs', '1'], ['name', field.name]]);
          w.open('s:complexType').open('s:sequence');
          // Optional: GET/POST answers leave out what the record lacks; nillable: SOAP writes it as nil.
          w.empty('s:element', [['minOccurs', '0'], ['maxOccurs', '1'], ['name', 'CurrentValue'], ['nillable', 'true'], ['type', 's:int']]);
          w.empty('s:element', [['minOccurs', '0'], ['maxOccurs', '1'], ['name', 'CurrentTextValue'], ['nillable', 'true'], ['type', 's:string']]);
          w.close();
          typeAttribute(w);
          w.close().close();
          break;
      }
    }
    w.close().close().close(); // sequence, complexType, element vehicleData
    w.close().close(); // sequence, complexType Vehicle
  },
};

/**
 * A vehicleJson member that vehicleData reads: a plain value or a `{CurrentTextValue, CurrentValue}`
 * pair, as records of different countries hold it (textValue in image-url.ts reads both).
 */
const VEHICLE_MEMBER_SCHEMA: JsonSchema = {
  anyOf: [
    { type: ['string', 'number'] },
    {
      type: 'object',
      properties: {
        CurrentTextValue: { type: ['string', 'number', 'null'] },
        CurrentValue: { type: ['integer', 'string', 'null'] },
      },
    },
  ],
};

/**
 * The vehicleJson document: its members vary by country (compat-notes "Data shapes"), so the
 * schema names the members vehicleData is derived from and ImageUrl, and leaves the object open.
 */
const VEHICLE_JSON_SCHEMA: JsonSchema = {
  type: 'object',
  description:
    'The vehicleJson document. Members vary by country; those listed are the ones the XML vehicleData is derived from. ' +
    'Each is a plain value or an object with CurrentTextValue (and sometimes CurrentValue).',
  properties: {
    ...Object.fromEntries(VEHICLE_DATA_FIELDS.map((field) => [field.name, VEHICLE_MEMBER_SCHEMA])),
    ImageUrl: { type: 'string', description: 'Absolute URL of a picture of the make and model (a UK motorbike\'s ends in |motorcycle after the encoded name, as the original writes it, so it is not format uri)' },
  },
  additionalProperties: true,
};

/**
 * A UK record of a motorbike: its BodyStyle says so (a live Check answer: "Motorbike"), or DVLA's
 * wheelplan is two wheels.
 */
function isMotorbike(vehicle: VehicleDocument): boolean {
  const body = textValue(vehicle, 'BodyStyle') ?? '';
  const wheelplan = textValue(vehicle, 'Wheelplan') ?? '';
  return /^(motor ?bike|motor ?cycle|moped|scooter)/i.test(body) || /^2 wheels/i.test(wheelplan);
}

export const vehicleCodec: ResultCodec<VehicleDocument> = {
  xmlName: 'Vehicle',
  xsdType: 'tns:Vehicle',
  schemaTypes: [VEHICLE_TYPE],
  jsonDescription: 'the vehicleJson document, a JSON object whose members vary by country',
  importPayload: {
    field: 'vehicle',
    // Members vary by country (compat-notes "Data shapes"): any JSON object is a vehicleJson document.
    validate: () => undefined,
  },

  fromRecord(record, { operation, baseUrl }) {
    const whole = record as VehicleDocument;
    let vehicle = whole;
    if (operation.fieldSubset) {
      const keep = new Set([...operation.fieldSubset, 'ImageUrl']);
      vehicle = Object.fromEntries(Object.entries(vehicle).filter(([k]) => keep.has(k)));
    }
    const rule = operation.imageUrl ?? 'make-model';
    if (rule === 'none') return vehicle;
    // Whether it is a motorbike is read from the whole record: a restricted variant may not serve BodyStyle.
    return withImageUrl(vehicle, baseUrl, rule === 'uk-motorbike' || (rule === 'uk' && isMotorbike(whole)) ? MOTORCYCLE_SUFFIX : '');
  },

  isChargeable: () => true,

  jsonBody: (vehicle) => vehicle,

  jsonSchema: () => VEHICLE_JSON_SCHEMA,

  writeXml(w, element, attributes, vehicle, binding) {
    writeComplex(w, element, attributes, false, () => {
      w.leaf('vehicleJson', JSON.stringify(vehicle));
      writeVehicleData(w, vehicle, binding);
    });
  },

  sample: () => ({
    Description: 'string',
    RegistrationYear: '2019',
    CarMake: { CurrentTextValue: 'string' },
    CarModel: { CurrentTextValue: 'string' },
    EngineSize: { CurrentTextValue: '1598' },
    MakeDescription: 'string',
    ModelDescription: 'string',
  }),
};
