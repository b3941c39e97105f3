import type { JsonSchema } from '../shared/json-schema.js';

/**
 * The members of a vehicleJson document this service knows, and the JSON shape each has in the
 * records it serves: the sample dataset (samples/sample-dataset.jsonl), the upstream mappers
 * (src/providers/) and the interface spec ("Vehicle", "JSON interface": CarMake and the other
 * wrapped members are `{CurrentTextValue}`; the VIN is under the original's misspelt
 * VechileIdentificationNumber in most countries). The JSON interface's document types each member
 * from this table (vehicle.codec.ts), so a generated client reads `CarMake.CurrentTextValue` as a
 * string without narrowing; members a country adds beyond these stay allowed, untyped.
 * test/unit/vehicle-members.test.ts checks every record of the sample dataset against it.
 */
export type VehicleMemberShape =
  /** A string. */
  | 'text'
  /** A whole number. */
  | 'integer'
  /** A year or count some countries write as a string and others as a number. */
  | 'text-or-integer'
  /** `{CurrentTextValue: string}` (CurrentValue, a whole number, when the source has one). */
  | 'wrapped'
  /** `{CurrentTextValue: string | number}`: a count or an amount some sources write as a number. */
  | 'wrapped-number'
  /** A string in some countries, wrapped in others (CarModel, MakeDescription, ModelDescription). */
  | 'text-or-wrapped'
  | 'boolean'
  /** An object of the source's own fields (France's ExtendedData). */
  | 'object'
  /** An object of the register's own nested structures (Denmark's ExtendedInformation). */
  | 'nested-object';

export const VEHICLE_MEMBERS: Readonly<Record<string, { readonly shape: VehicleMemberShape; readonly description: string }>> = {
  ABICode: { shape: 'text', description: 'The UK insurers’ (ABI) vehicle code' },
  Description: { shape: 'text', description: 'A readable summary, usually "{make} {model}"' },
  RegistrationYear: { shape: 'text-or-integer', description: 'The year of first registration' },
  ManufactureYearFrom: { shape: 'integer', description: 'First year the model was built' },
  ManufactureYearTo: { shape: 'integer', description: 'Last year the model was built' },
  CarMake: { shape: 'wrapped', description: 'The make' },
  CarModel: { shape: 'text-or-wrapped', description: 'The model' },
  BodyStyle: { shape: 'wrapped', description: 'The body style' },
  EngineSize: { shape: 'wrapped', description: 'The engine size (cc, or as the source gives it)' },
  NumberOfDoors: { shape: 'wrapped', description: 'The number of doors' },
  Transmission: { shape: 'wrapped', description: 'The transmission' },
  FuelType: { shape: 'wrapped', description: 'The fuel' },
  MakeDescription: { shape: 'text-or-wrapped', description: 'The make as the source writes it' },
  ModelDescription: { shape: 'text-or-wrapped', description: 'The model as the source writes it' },
  Immobiliser: { shape: 'wrapped', description: 'Whether an immobiliser is fitted' },
  NumberOfSeats: { shape: 'wrapped-number', description: 'The number of seats' },
  IndicativeValue: { shape: 'wrapped-number', description: 'An indicative value (a number in UK records)' },
  DriverSide: { shape: 'wrapped', description: 'The side of the steering wheel' },
  ImageUrl: {
    shape: 'text',
    description: "Absolute URL of a picture of the make and model (a UK motorbike's ends in |motorcycle after the encoded name, as the original writes it, so it is not format uri)",
  },
  VechileIdentificationNumber: { shape: 'text', description: 'The VIN, under the original service’s misspelt name (USA, Australia, New Zealand, the Nordics, India, VinCheck)' },
  VehicleIdentificationNumber: { shape: 'text', description: 'The VIN (countries that spell it right)' },
  VIN: { shape: 'text', description: 'The VIN (as some countries name it)' },
  Vin: { shape: 'text', description: 'The VIN (as some countries name it)' },
  ChassisNumber: { shape: 'text', description: 'The chassis number' },
  EngineNumber: { shape: 'text', description: 'The engine number' },
  EngineCode: { shape: 'text', description: 'The engine code' },
  Colour: { shape: 'text', description: 'The colour' },
  RegisterStatus: { shape: 'text', description: 'Whether the register still lists the vehicle (Israel: "Taken off the road" when only a cancellation register has the plate)' },
  Variant: { shape: 'text', description: 'The variant' },
  Version: { shape: 'text', description: 'The version' },
  Series: { shape: 'text', description: 'The series' },
  Trim: { shape: 'text', description: 'The trim level' },
  VehicleClass: { shape: 'text', description: 'The vehicle class' },
  EuropeanVehicleCategory: { shape: 'text', description: 'The EU vehicle category (M1, N1, L3e...)' },
  TypeApproval: { shape: 'text', description: 'The type approval category or number' },
  Wheelplan: { shape: 'text', description: 'The UK wheelplan' },
  Power: { shape: 'text', description: 'The power as the source writes it' },
  PowerCV: { shape: 'text', description: 'The fiscal horsepower (CV)' },
  PowerHP: { shape: 'integer', description: 'The power in horsepower' },
  PowerKW: { shape: 'text-or-integer', description: 'The power in kW' },
  Cylindree: { shape: 'text', description: 'The engine capacity (cylindrée)' },
  YearOfManufacture: { shape: 'integer', description: 'The year of manufacture' },
  FirstRegistration: { shape: 'text', description: 'The date of first registration' },
  RegistrationDate: { shape: 'text', description: 'The registration date' },
  MonthOfFirstRegistration: { shape: 'text', description: 'The month of first registration (YYYY-MM)' },
  RegistrationExpiry: { shape: 'text', description: 'When the registration expires' },
  RegistrationExpiryDate: { shape: 'text', description: 'When the registration expires' },
  LicenceExpiry: { shape: 'text', description: 'When the licence expires' },
  TaxExpiry: { shape: 'text', description: 'When the road tax expires' },
  TaxStatus: { shape: 'text', description: 'The road tax status' },
  TaxDueDate: { shape: 'text', description: 'When the road tax is due' },
  RoadTaxExpiryDate: { shape: 'text', description: 'When the road tax expires' },
  MotStatus: { shape: 'text', description: 'The MOT status' },
  MotExpiryDate: { shape: 'text', description: 'When the MOT expires' },
  APKExpiryDate: { shape: 'text', description: 'When the Dutch APK inspection expires' },
  COEExpiryDate: { shape: 'text', description: 'When the Singapore certificate of entitlement expires' },
  NextInspection: { shape: 'text', description: 'The next technical inspection' },
  ComplianceDate: { shape: 'text', description: 'The compliance date' },
  EuroStatus: { shape: 'text', description: 'The Euro emissions standard' },
  RevenueWeight: { shape: 'integer', description: 'The revenue weight in kg' },
  MarkedForExport: { shape: 'boolean', description: 'Whether the vehicle is marked for export' },
  Status: { shape: 'text', description: 'The registration status' },
  Registry: { shape: 'text', description: 'The registry' },
  Service: { shape: 'text', description: 'The use (private, taxi...)' },
  Origin: { shape: 'text', description: 'Where the vehicle comes from' },
  CountryOfOrigin: { shape: 'text', description: 'The country of origin' },
  ManufacturerName: { shape: 'text', description: 'The manufacturer' },
  AssemblyPlant: { shape: 'text', description: 'The assembly plant' },
  PlantCity: { shape: 'text', description: 'The city of the plant' },
  PlantCountry: { shape: 'text', description: 'The country of the plant' },
  CataloguePrice: { shape: 'text', description: 'The catalogue price' },
  NVIC: { shape: 'text', description: 'The Australian NVIC code' },
  VehicleInsuranceGroup: { shape: 'text', description: 'The UK insurance group' },
  VehicleInsuranceGroupOutOf: { shape: 'text', description: 'The number of insurance groups' },
  Location: { shape: 'text', description: 'Where the vehicle is registered' },
  Region: { shape: 'text', description: 'The region' },
  Province: { shape: 'text', description: 'The province' },
  County: { shape: 'text', description: 'The county' },
  Canton: { shape: 'text', description: 'The Swiss canton' },
  Department: { shape: 'text', description: 'The French département' },
  Emirate: { shape: 'text', description: 'The emirate' },
  Voivodeship: { shape: 'text', description: 'The Polish voivodeship' },
  ExtendedData: { shape: 'object', description: "The source's own further fields" },
  ExtendedInformation: { shape: 'nested-object', description: "The register's own further fields (Denmark's DMR)" },
};

const WRAPPED_VALUE: JsonSchema = { type: ['integer', 'null'], description: 'The value as a number, when the source has one' };

/** The JSON schema of a member of each shape. */
export const VEHICLE_MEMBER_SCHEMAS: Readonly<Record<VehicleMemberShape, JsonSchema>> = {
  text: { type: 'string' },
  integer: { type: 'integer' },
  'text-or-integer': { type: ['string', 'integer'] },
  wrapped: { type: 'object', properties: { CurrentTextValue: { type: 'string' }, CurrentValue: WRAPPED_VALUE }, required: ['CurrentTextValue'] },
  'wrapped-number': { type: 'object', properties: { CurrentTextValue: { type: ['string', 'number'] }, CurrentValue: WRAPPED_VALUE }, required: ['CurrentTextValue'] },
  'text-or-wrapped': {
    oneOf: [{ type: 'string' }, { type: 'object', properties: { CurrentTextValue: { type: 'string' }, CurrentValue: WRAPPED_VALUE }, required: ['CurrentTextValue'] }],
  },
  boolean: { type: 'boolean' },
  object: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } },
  'nested-object': { type: 'object' },
};

/** The properties of the Vehicle schema: every known member, typed, with its description. */
export function vehicleMemberProperties(): Record<string, JsonSchema> {
  return Object.fromEntries(Object.entries(VEHICLE_MEMBERS).map(([name, { shape, description }]) => [name, { ...VEHICLE_MEMBER_SCHEMAS[shape], description }]));
}
