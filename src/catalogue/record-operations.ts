/**
 * The operations of the original that return something other than a Vehicle, an MOT history or
 * Euro NCAP ratings (issue 15 section 2; compat-notes "The original's whole contract"; parameter
 * names, order and XML types as the vendor WSDL and the WCF proxy of reg.asmx have them).
 *
 * Seven of them take no `username` (CarSpecifications, WheelSize, CheckStolen, CheckRecalledVIN,
 * CheckAlternativeVersionsFrance, CheckIrishTaxi, CheckLondonTaxi): on the XML bindings they are
 * charged to the account of the HTTP Basic credentials, or answered free to anonymous callers when
 * the operator allows it (lookup-authentication.ts admitAnonymous, docs/interfaces.md "Operations without a username").
 */
import { int32Rule, registrationRule, textRule, vinRule } from './input-rules.js';
import type { DatasetDeclaration, OperationDeclaration, ParameterDeclaration, ServiceId } from './operation.js';

/** The account username of the XML bindings, last where the original has it (as in operations.ts). */
const USERNAME: ParameterDeclaration = { name: 'username', xmlType: 's:string', role: 'username', required: true, description: 'Account username' };

const key = (name: string, rule: ParameterDeclaration['rule'], description: string, xmlType: ParameterDeclaration['xmlType'] = 's:string'): ParameterDeclaration => ({
  name,
  xmlType,
  role: 'key',
  ...(rule ? { rule } : {}),
  required: true,
  description,
});

const plate = (name: string): ParameterDeclaration => key(name, registrationRule, 'Registration (licence plate) number');
const vin = (name: string): ParameterDeclaration => key(name, vinRule, 'Vehicle identification number (17 characters)');

/** make, model, year (s:int): the key of CarSpecifications and WheelSize, in the original's order. */
const MAKE_MODEL_YEAR: readonly ParameterDeclaration[] = [
  key('make', textRule, 'Vehicle make, e.g. Honda'),
  key('model', textRule, 'Vehicle model, e.g. Civic'),
  key('year', int32Rule, 'Model year, e.g. 2019', 's:int'),
];

const record = (name: string): DatasetDeclaration => ({ name, kind: 'record' });

function operation(
  name: string,
  label: string,
  service: ServiceId,
  resultType: OperationDeclaration['resultType'],
  parameters: readonly ParameterDeclaration[],
  documentation: string,
  dataset: DatasetDeclaration = record(name),
  country?: string,
): OperationDeclaration {
  return {
    name,
    label,
    ...(country === undefined ? {} : { country }),
    documentation,
    services: [service],
    parameters,
    // One segment per parameter but username, in wire order (the default path shape).
    jsonPath: { segments: parameters.filter((p) => p.role !== 'username').map((p) => ({ label: p.name, parameter: p.name, optional: !p.required })) },
    resultType,
    cost: 1,
    dataset,
  };
}

const NO_USERNAME = 'Takes no username: charged to the account of the HTTP Basic credentials, or free to anonymous callers where the operator allows it.';

/** reg.asmx: CarSpecifications and WheelSize, after the country lookups. */
export const REG_RECORD_OPERATIONS: readonly OperationDeclaration[] = [
  operation(
    'CarSpecifications',
    'Car specifications',
    'reg',
    'DataGrid',
    MAKE_MODEL_YEAR,
    `Returns the specifications of a make, model and model year as a table (DataGrid). ${NO_USERNAME}`,
    // The newsources engineer's vPIC provider answers this dataset (key make|model|year).
    record('car-specifications'),
  ),
  operation('WheelSize', 'Wheel size', 'reg', 'string', MAKE_MODEL_YEAR, `Returns the wheel and tyre sizes of a make, model and model year as text. ${NO_USERNAME}`),
];

/** bespokeapi.asmx: the operations returning the original's other record types. */
export const BESPOKE_RECORD_OPERATIONS: readonly OperationDeclaration[] = [
  operation(
    'CheckPrice',
    'Valuation',
    'bespoke',
    'Valuation',
    [
      plate('RegistrationNumber'),
      {
        name: 'mileage',
        xmlType: 's:int',
        // Required by the original; a stored valuation is per registration, so it does not change the answer.
        role: 'ignored',
        rule: int32Rule,
        required: true,
        description: 'Vehicle mileage (a whole number); required, as in the original; the stored valuation is per registration',
        example: '42000',
      },
      USERNAME,
    ],
    'Returns a valuation (description and price) of a UK vehicle by registration number.',
    record('CheckPrice'),
    'UK',
  ),
  operation('IsInsured', 'Insurance', 'bespoke', 'InsuredStatus', [plate('regNumber'), USERNAME], 'Says whether a UK vehicle is insured, with its details.', record('IsInsured'), 'UK'),
  operation(
    'CheckInsuranceStatusItaly',
    'Italy insurance',
    'bespoke',
    'InsuranceDetails',
    [plate('regNumber'), USERNAME],
    'Returns the insurance status of an Italian vehicle: make, model, insurer, expiry, whether insured, region.',
    record('CheckInsuranceStatusItaly'),
    'Italy',
  ),
  operation(
    'CheckInsuranceStatusPortugal',
    'Portugal insurance',
    'bespoke',
    'Insurance',
    [plate('regNumber'), USERNAME],
    'Returns the insurance policy of a Portuguese vehicle: insurer, start and end dates, policy.',
    record('CheckInsuranceStatusPortugal'),
    'Portugal',
  ),
  operation(
    'CheckStolen',
    'Stolen vehicle',
    'bespoke',
    'ArrayOfNameValue',
    [vin('vinNumber')],
    `Returns the theft report of a vehicle by VIN as name/value pairs; an empty list (free) when the VIN is not reported stolen. ${NO_USERNAME}`,
  ),
  operation(
    'CheckRecalledVIN',
    'Recall',
    'bespoke',
    'string',
    [vin('vin')],
    `Returns the safety recalls of a vehicle by VIN as text. ${NO_USERNAME}`,
    // The newsources engineer's NHTSA recalls provider answers this dataset (key: the VIN).
    record('recalled-vin'),
  ),
  operation(
    'CheckAlternativeVersionsFrance',
    'France versions',
    'bespoke',
    'FrenchCar2',
    [plate('RegNumber')],
    `Returns the alternative versions (FRVersion) of a French vehicle by registration number. ${NO_USERNAME}`,
    record('CheckAlternativeVersionsFrance'),
    'France',
  ),
  operation('CheckIrishTaxi', 'Irish taxi', 'bespoke', 'IrishTaxi', [plate('regNumber')], `Returns the Irish taxi licence of a vehicle by registration number. ${NO_USERNAME}`, record('CheckIrishTaxi'), 'Ireland'),
  operation('CheckLondonTaxi', 'London taxi', 'bespoke', 'LondonTaxi', [plate('regNumber')], `Returns the London taxi licence of a vehicle by registration number. ${NO_USERNAME}`, record('CheckLondonTaxi'), 'UK'),
];
