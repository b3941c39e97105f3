import { MOTORCYCLE_SUFFIX, textValue, withAustralianImage, withImageUrl } from './image-url.js';
import type { VehicleDocument } from './result-documents.js';
import type { XmlWriter } from '../xml/xml-writer.js';
import type { JsonSchema } from '../shared/json-schema.js';
import { writeComplex, type ResultCodec, type SchemaType, type XmlBinding } from './result-codec.js';
import { vehicleMemberProperties } from './vehicle-members.js';
import { child, isNil, onlyChildren, simpleText, XmlReadError, type XmlElement } from './xml-read.js';
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
 * vehicleData as a record: each child the answer has, by name. Simple children hold their text;
 * a pair holds CurrentValue and CurrentTextValue, each a text, `null` for an `xsi:nil` element, or
 * absent. The writer writes exactly this, in the schema's order (VEHICLE_DATA_FIELDS).
 */
export type VehicleDataPair = { readonly CurrentValue?: string | null; readonly CurrentTextValue?: string | null };
export type VehicleData = Readonly<Record<string, string | VehicleDataPair>>;

/**
 * A Vehicle answer of the original service kept whole (the `regcheck` provider's record, and the
 * import format's "original answer" form of a `vehicle`): the vehicleJson text as it came, served
 * byte for byte on every binding, and the vehicleData children it sent, served as they came.
 * Nothing of it is derived from our rules (no ImageUrl added, no field subset applied).
 */
export interface OriginalVehicle {
  readonly vehicleJson: string;
  readonly vehicleData: VehicleData;
}

/**
 * A Vehicle result of a vehicleJson document of ours: the document (the JSON body) and the
 * vehicleData children its operation leaves out (OperationDeclaration.vehicleDataOmits).
 */
export interface DocumentVehicle {
  readonly document: VehicleDocument;
  readonly vehicleDataOmits: readonly string[];
}

/** The value of a Vehicle result: a vehicleJson document of ours, or the original's answer. */
export type VehicleValue = DocumentVehicle | OriginalVehicle;

const ORIGINAL_MEMBERS = ['vehicleJson', 'vehicleData'];
const PAIR_MEMBERS = ['CurrentValue', 'CurrentTextValue'];
const FIELD_KIND = new Map(VEHICLE_DATA_FIELDS.map((f) => [f.name, f.kind]));
/** s:int, the type of CurrentValue. */
const INT32 = (text: string): boolean => INTEGER.test(text.trim()) && Math.abs(Number(text)) <= 2147483647;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * True when a Vehicle record is the original's answer: exactly `vehicleJson` (a string) and
 * `vehicleData` (an object). No country's vehicleJson document has that shape.
 */
export function isOriginalVehicle(record: unknown): record is OriginalVehicle {
  if (!isPlainObject(record)) return false;
  const keys = Object.keys(record);
  return keys.length === 2 && ORIGINAL_MEMBERS.every((k) => k in record) && typeof record.vehicleJson === 'string' && isPlainObject(record.vehicleData);
}

/** Why an original answer (import member `member`) cannot be served, or undefined. */
export function validateOriginalVehicle(member: string, record: OriginalVehicle): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(record.vehicleJson);
  } catch {
    return `${member}.vehicleJson must be the text of a JSON object`;
  }
  if (!isPlainObject(parsed)) return `${member}.vehicleJson must be the text of a JSON object`;
  for (const [name, value] of Object.entries(record.vehicleData)) {
    const kind = FIELD_KIND.get(name);
    const at = `${member}.vehicleData.${name}`;
    if (kind === undefined) return `${member}.vehicleData has unexpected field "${name}" (expected ${VEHICLE_DATA_FIELDS.map((f) => f.name).join(', ')})`;
    if (kind === 'pair') {
      if (!isPlainObject(value)) return `${at} must be an object with CurrentValue and/or CurrentTextValue`;
      const extra = Object.keys(value).find((k) => !PAIR_MEMBERS.includes(k));
      if (extra !== undefined) return `${at} has unexpected field "${extra}" (expected CurrentValue, CurrentTextValue)`;
      const { CurrentValue: cv, CurrentTextValue: ctv } = value;
      if (cv !== undefined && cv !== null && (typeof cv !== 'string' || !INT32(cv))) return `${at}.CurrentValue must be a whole number (32-bit) as text, or null`;
      if (ctv !== undefined && ctv !== null && typeof ctv !== 'string') return `${at}.CurrentTextValue must be a string or null`;
      continue;
    }
    if (typeof value !== 'string') return `${at} must be a string`;
    if (kind === 'integer' && !INTEGER.test(value)) return `${at} must be a whole number as text`;
    if (kind === 'decimal' && !DECIMAL.test(value)) return `${at} must be a decimal number as text`;
  }
  return undefined;
}

/**
 * vehicleData derived from a vehicleJson document of ours (issue 3 "Results"): only the children
 * the record has a value for; inside a pair that is present, SOAP writes an empty CurrentValue or
 * CurrentTextValue as xsi:nil (the spec) and GET/POST leave it out (live answers).
 */
function deriveVehicleData(doc: VehicleDocument, binding: XmlBinding, omits: readonly string[]): VehicleData {
  const data: Record<string, string | VehicleDataPair> = {};
  const leaveOut = nilLeftOut(doc);
  for (const field of VEHICLE_DATA_FIELDS) {
    if (omits.includes(field.name)) continue;
    const text = textValue(doc, field.name) ?? (field.fallback === undefined ? undefined : textValue(doc, field.fallback));
    switch (field.kind) {
      case 'integer':
        if (text !== undefined && INTEGER.test(text)) data[field.name] = String(BigInt(text));
        break;
      case 'decimal':
        if (text !== undefined && DECIMAL.test(text)) data[field.name] = text;
        break;
      case 'text':
        if (text !== undefined) data[field.name] = text;
        break;
      case 'pair': {
        const value = currentValue(doc, field.name, text, binding);
        if (value === undefined && text === undefined) break;
        // SOAP writes what a present pair lacks as xsi:nil (null); GET/POST leave it out.
        const absent = binding === 'soap' ? null : undefined;
        const pair: { CurrentValue?: string | null; CurrentTextValue?: string | null } = {};
        if ((value ?? (leaveOut(field.name, 'CurrentValue') ? undefined : absent)) !== undefined) pair.CurrentValue = value ?? null;
        if ((text ?? absent) !== undefined) pair.CurrentTextValue = text ?? null;
        data[field.name] = pair;
        break;
      }
    }
  }
  return data;
}

/**
 * The pair members a SOAP answer leaves out, rather than writing them `xsi:nil`, when the record
 * has no value for them (issue 32, "the last differences"): where a record has no BodyStyle, the
 * original's SOAP answer has no `CarMake/CurrentValue` at all, so a proxy generated from its WSDL
 * (where CurrentValue is not nillable) reads null there, and read "" from our empty element. Only
 * that member, only then: everywhere else a present pair's missing member stays `xsi:nil`, as the
 * interface spec and the recorded answers have it (compat-notes "Wire differences" 4).
 */
function nilLeftOut(doc: VehicleDocument): (pair: string, member: 'CurrentValue' | 'CurrentTextValue') => boolean {
  const bodyStyle = textValue(doc, 'BodyStyle') !== undefined || explicitCurrentValue(doc, 'BodyStyle') !== undefined;
  return bodyStyle ? NEVER : (pair, member) => pair === 'CarMake' && member === 'CurrentValue';
}

const NEVER = (): boolean => false;

/** One child of a pair: its text, `xsi:nil` for null, nothing when absent. */
function writePairMember(w: XmlWriter, name: string, value: string | null | undefined): void {
  if (value === null) w.empty(name, NIL);
  else if (value !== undefined) w.leaf(name, value);
}

/** Writes vehicleData exactly as `data` holds it, children in the schema's order. */
function writeVehicleData(w: XmlWriter, data: VehicleData): void {
  const present = VEHICLE_DATA_FIELDS.filter((f) => data[f.name] !== undefined);
  writeComplex(w, 'vehicleData', [], present.length === 0, () => {
    for (const field of present) {
      const value = data[field.name];
      if (typeof value === 'string') w.leaf(field.name, value);
      else if (value !== undefined) {
        w.open(field.name);
        writePairMember(w, 'CurrentValue', value.CurrentValue);
        writePairMember(w, 'CurrentTextValue', value.CurrentTextValue);
        w.close();
      }
    }
  });
}

/**
 * The reader of writeVehicleData: the children of the original's vehicleData, as the record
 * holds them. An `xsi:nil` simple child is left out (nothing to serve); one that is not of its
 * schema type makes the answer unreadable rather than be passed on to proxies that would throw.
 */
function readVehicleData(element: XmlElement | undefined): VehicleData {
  const data: Record<string, string | VehicleDataPair> = {};
  if (!element || isNil(element)) return data;
  onlyChildren(element, VEHICLE_DATA_FIELDS.map((f) => f.name));
  for (const c of element.children) {
    const kind = FIELD_KIND.get(c.local);
    if (data[c.local] !== undefined) throw new XmlReadError(`vehicleData holds ${c.local} twice`);
    if (kind === 'pair') {
      onlyChildren(c, PAIR_MEMBERS);
      const pair: { CurrentValue?: string | null; CurrentTextValue?: string | null } = {};
      for (const name of PAIR_MEMBERS) {
        const member = child(c, name);
        if (!member) continue;
        const value = isNil(member) ? null : simpleText(member);
        if (name === 'CurrentValue') {
          if (value !== null && !INT32(value)) throw new XmlReadError(`vehicleData ${c.local} has a CurrentValue that is not an s:int`);
          pair.CurrentValue = value;
        } else pair.CurrentTextValue = value;
      }
      data[c.local] = pair;
      continue;
    }
    if (isNil(c)) continue;
    const value = simpleText(c);
    if (kind === 'integer' && !INTEGER.test(value)) throw new XmlReadError(`vehicleData ${c.local} is not a whole number`);
    if (kind === 'decimal' && !DECIMAL.test(value)) throw new XmlReadError(`vehicleData ${c.local} is not a decimal`);
    data[c.local] = value;
  }
  return data;
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
 * The vehicleJson document: its members vary by country (compat-notes "Data shapes"), so the
 * schema types every member this service knows (vehicle-members.ts) and leaves the object open
 * for the ones a country adds.
 */
const VEHICLE_JSON_SCHEMA: JsonSchema = {
  type: 'object',
  description:
    'The vehicleJson document. Members vary by country: a record has some of those listed (the XML vehicleData is derived from ABICode to DriverSide), ' +
    'and may have others. The wrapped members are objects with CurrentTextValue (and CurrentValue when the source has one).',
  properties: vehicleMemberProperties(),
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

export const vehicleCodec: ResultCodec<VehicleValue> = {
  xmlName: 'Vehicle',
  xsdType: 'tns:Vehicle',
  schemaTypes: [VEHICLE_TYPE],
  jsonDescription: 'the vehicleJson document, a JSON object whose members vary by country',
  importPayload: {
    field: 'vehicle',
    // Members vary by country (compat-notes "Data shapes"): any JSON object is a vehicleJson
    // document; the original's whole answer ({vehicleJson, vehicleData}) is checked as one.
    validate: (payload) => (isOriginalVehicle(payload) ? validateOriginalVehicle('vehicle', payload) : undefined),
  },

  fromRecord(record, { operation, baseUrl }) {
    // What the original answered is served as it came (issue 24): nothing derived from our rules.
    if (isOriginalVehicle(record)) return record;
    const whole = record as VehicleDocument;
    let vehicle = whole;
    if (operation.fieldSubset) {
      const keep = new Set([...operation.fieldSubset, 'ImageUrl']);
      vehicle = Object.fromEntries(Object.entries(vehicle).filter(([k]) => keep.has(k)));
    }
    const rule = operation.imageUrl ?? 'make-model';
    const vehicleDataOmits = operation.vehicleDataOmits ?? [];
    if (rule === 'none') return { document: vehicle, vehicleDataOmits };
    if (rule === 'australia') return { document: withAustralianImage(vehicle, baseUrl), vehicleDataOmits };
    // Whether it is a motorbike is read from the whole record: a restricted variant may not serve BodyStyle.
    const suffix = rule === 'uk-motorbike' || (rule === 'uk' && isMotorbike(whole)) ? MOTORCYCLE_SUFFIX : '';
    return { document: withImageUrl(vehicle, baseUrl, suffix), vehicleDataOmits };
  },

  fromXml(root) {
    onlyChildren(root, ['vehicleJson', 'vehicleData']);
    const json = child(root, 'vehicleJson');
    if (!json || isNil(json)) throw new XmlReadError('the Vehicle has no vehicleJson');
    const original: OriginalVehicle = { vehicleJson: simpleText(json), vehicleData: readVehicleData(child(root, 'vehicleData')) };
    const problem = validateOriginalVehicle('Vehicle', original);
    if (problem !== undefined) throw new XmlReadError(problem);
    return original;
  },

  isChargeable: () => true,

  jsonBody: (vehicle) => (isOriginalVehicle(vehicle) ? (JSON.parse(vehicle.vehicleJson) as unknown) : vehicle.document),

  // The original's vehicleJson is the JSON body as it came, byte for byte (spacing, escapes, number forms).
  jsonText: (vehicle) => (isOriginalVehicle(vehicle) ? vehicle.vehicleJson : JSON.stringify(vehicle.document)),

  jsonSchema: () => VEHICLE_JSON_SCHEMA,

  writeXml(w, element, attributes, vehicle, binding) {
    writeComplex(w, element, attributes, false, () => {
      if (isOriginalVehicle(vehicle)) {
        w.leaf('vehicleJson', vehicle.vehicleJson);
        writeVehicleData(w, vehicle.vehicleData);
        return;
      }
      w.leaf('vehicleJson', JSON.stringify(vehicle.document));
      writeVehicleData(w, deriveVehicleData(vehicle.document, binding, vehicle.vehicleDataOmits));
    });
  },

  sample: () => ({
    vehicleDataOmits: [],
    document: {
    Description: 'string',
    RegistrationYear: '2019',
    CarMake: { CurrentTextValue: 'string' },
    CarModel: { CurrentTextValue: 'string' },
    EngineSize: { CurrentTextValue: '1598' },
    MakeDescription: 'string',
    ModelDescription: 'string',
    },
  }),
};
