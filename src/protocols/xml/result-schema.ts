import { NCAP_FIELDS } from '../../datasets/import/record-validator.js';

/**
 * The typed schema of the results, as data: the encoder writes elements in this order and the WSDL
 * generator declares the same order, so the two cannot drift (strict clients such as zeep reject
 * out-of-order elements; compat-notes "SOAP requests and responses").
 */

/**
 * How a vehicleData child is typed and filled from the vehicleJson document:
 * - `integer`: simple content, written only when the document's value is a whole number;
 * - `text`: simple content, written when the document has a value;
 * - `pair`: CurrentValue (int) + CurrentTextValue (string), always written, empty ones as xsi:nil.
 * Every child carries the optional `type` attribute of the spec.
 */
export type VehicleDataKind = 'integer' | 'text' | 'pair';

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

export const UKTEST_STRING_FIELDS = ['TestDate', 'ExpiryDate', 'Result', 'Odometer', 'TestNumber'] as const;
export const UKTEST_ARRAY_FIELDS = ['FailureReasons', 'Advisories'] as const;

export type NcapFieldType = 'int' | 'boolean' | 'string' | 'dateTime';

/** PreAssessmentSearchResult in the spec's order; value types are required (minOccurs 1). */
export const NCAP_FIELD_ORDER: ReadonlyArray<{ readonly name: string; readonly type: NcapFieldType }> = [
  ...['AdultOccupantStars', 'ChildOccupantStars', 'PedestrianStars'].map((name) => ({ name, type: 'int' as const })),
  ...['AdultOccupantStrikeThrough', 'ChildOccupantStrikeThrough', 'PedestrianStrikeThrough'].map((name) => ({ name, type: 'boolean' as const })),
  ...['Id', 'ClassId', 'ProtocolId', 'MakeId', 'ModelId', 'SortOrder', 'LifecycleStatus', 'Year'].map((name) => ({ name, type: 'int' as const })),
  ...['Title', 'Name', 'Make', 'Model', 'Content', 'Url'].map((name) => ({ name, type: 'string' as const })),
  ...['ClassEN', 'ClassDE', 'ClassNL', 'ClassES', 'ClassFR', 'ClassIT', 'ClassRU', 'ClassSV', 'ClassTR', 'ClassZH'].map((name) => ({ name, type: 'string' as const })),
  ...['MakeImageLarge', 'MakeImageSmall', 'Images', 'YoutubeVideos', 'YoukuVideos'].map((name) => ({ name, type: 'string' as const })),
  ...['IsPublished', 'IsPreProtocol', 'IsFleet'].map((name) => ({ name, type: 'boolean' as const })),
  ...['CreateDate', 'ReleaseDate', 'FirstPublished'].map((name) => ({ name, type: 'dateTime' as const })),
];

// The import validator and the schema must name the same fields.
const declared = new Set(NCAP_FIELD_ORDER.map((f) => f.name));
for (const name of [...NCAP_FIELDS.ints, ...NCAP_FIELDS.bools, ...NCAP_FIELDS.strings, ...NCAP_FIELDS.dates]) {
  if (!declared.has(name)) throw new Error(`PreAssessmentSearchResult field ${name} is validated on import but missing from the schema`);
}

/** .NET's default values, written for required value fields the record does not carry. */
export const NCAP_DEFAULTS: Readonly<Record<Exclude<NcapFieldType, 'string'>, string>> = {
  int: '0',
  boolean: 'false',
  dateTime: '0001-01-01T00:00:00',
};
