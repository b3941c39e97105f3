import { textValue, withImageUrl } from '../lookup/image-url.js';
import type { VehicleDocument } from '../lookup/lookup-result.js';
import type { XmlWriter } from '../protocols/xml/xml-writer.js';
import { writeComplex, type ResultCodec, type SchemaType } from './result-codec.js';
import { optional } from './xsd.js';

/**
 * Vehicle: the result of every Check<Country> (interface spec "Vehicle"). `vehicleJson` is the
 * stored document as JSON text; `vehicleData` is derived from it.
 */

/**
 * How a vehicleData child is typed and filled from the vehicleJson document:
 * - `integer`: simple content, written only when the document's value is a whole number;
 * - `text`: simple content, written when the document has a value;
 * - `pair`: CurrentValue (int) + CurrentTextValue (string), always written, empty ones as xsi:nil.
 * Every child carries the optional `type` attribute of the spec.
 */
export type VehicleDataKind = 'integer' | 'text' | 'pair';

/** vehicleData's children in the spec's order: the encoder and the WSDL both follow it. */
export const VEHICLE_DATA_FIELDS: ReadonlyArray<{ readonly name: string; readonly kind: VehicleDataKind }> = [
  { name: 'ABICode', kind: 'integer' },
  { name: 'Description', kind: 'text' },
  { name: 'RegistrationYear', kind: 'integer' },
  { name: 'ManufactureYearFrom', kind: 'integer' },
  { name: 'ManufactureYearTo', kind: 'integer' },
  { name: 'CarMake', kind: 'pair' },
  { name: 'CarModel', kind: 'text' },
  { name: 'BodyStyle', kind: 'pair' },
  { name: 'EngineSize', kind: 'pair' },
  { name: 'NumberOfDoors', kind: 'pair' },
  { name: 'Transmission', kind: 'pair' },
  { name: 'FuelType', kind: 'pair' },
  { name: 'MakeDescription', kind: 'text' },
  { name: 'ModelDescription', kind: 'text' },
  { name: 'Immobiliser', kind: 'pair' },
  { name: 'NumberOfSeats', kind: 'pair' },
  { name: 'IndicativeValue', kind: 'text' },
  { name: 'DriverSide', kind: 'pair' },
];

const NIL: ReadonlyArray<readonly [string, string]> = [['xsi:nil', 'true']];
const INTEGER = /^[+-]?\d{1,18}$/;

/** The CurrentValue of a vehicleJson member: an explicit integer, else its text when that is a whole number. */
function currentValue(doc: VehicleDocument, member: string, text: string | undefined): string | undefined {
  const v = doc[member];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const explicit = (v as Record<string, unknown>).CurrentValue;
    if (typeof explicit === 'number' && Number.isInteger(explicit)) return String(explicit);
    if (typeof explicit === 'string' && INTEGER.test(explicit.trim())) return String(Number(explicit.trim()));
  }
  if (text !== undefined && INTEGER.test(text) && Math.abs(Number(text)) <= 2147483647) return String(Number(text));
  return undefined;
}

/** vehicleData, derived from the vehicleJson document (issue 3 "Results"). */
function writeVehicleData(w: XmlWriter, doc: VehicleDocument): void {
  w.open('vehicleData');
  for (const field of VEHICLE_DATA_FIELDS) {
    const text = textValue(doc, field.name);
    switch (field.kind) {
      case 'integer':
        if (text !== undefined && INTEGER.test(text)) w.leaf(field.name, String(BigInt(text)));
        break;
      case 'text':
        if (text !== undefined) w.leaf(field.name, text);
        break;
      case 'pair': {
        const value = currentValue(doc, field.name, text);
        w.open(field.name);
        if (value === undefined) w.empty('CurrentValue', NIL);
        else w.leaf('CurrentValue', value);
        if (text === undefined) w.empty('CurrentTextValue', NIL);
        else w.leaf('CurrentTextValue', text);
        w.close();
        break;
      }
    }
  }
  w.close();
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
        case 'text':
          simpleContent(w, field.name, 's:string');
          break;
        case 'pair':
          w.open('s:element', [['minOccurs', '0'], ['maxOccurs', '1'], ['name', field.name]]);
          w.open('s:complexType').open('s:sequence');
          w.empty('s:element', [['minOccurs', '1'], ['maxOccurs', '1'], ['name', 'CurrentValue'], ['nillable', 'true'], ['type', 's:int']]);
          w.empty('s:element', [['minOccurs', '1'], ['maxOccurs', '1'], ['name', 'CurrentTextValue'], ['nillable', 'true'], ['type', 's:string']]);
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
    let vehicle = record as VehicleDocument;
    if (operation.fieldSubset) {
      const keep = new Set([...operation.fieldSubset, 'ImageUrl']);
      vehicle = Object.fromEntries(Object.entries(vehicle).filter(([k]) => keep.has(k)));
    }
    return withImageUrl(vehicle, baseUrl);
  },

  isChargeable: () => true,

  jsonBody: (vehicle) => vehicle,

  writeXml(w, element, attributes, vehicle) {
    writeComplex(w, element, attributes, false, () => {
      w.leaf('vehicleJson', JSON.stringify(vehicle));
      writeVehicleData(w, vehicle);
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
