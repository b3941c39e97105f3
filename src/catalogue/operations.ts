/**
 * The operation catalogue: every operation of the interface spec and of compat-notes.md, declared
 * once. Adding a country is one entry here.
 */
import {
  australianStateRule,
  canadianProvinceRule,
  cyrillicPlateRule,
  greekPlateRule,
  int32Rule,
  kbaNumberRule,
  optionalTextRule,
  pakistanProvinceRule,
  registrationRule,
  swissPlateRule,
  textRule,
  usStateRule,
  vinRule,
} from './input-rules.js';
import type { InputRule } from './input-rules.js';
import type {
  DatasetDeclaration,
  ImageUrlRule,
  JsonPathShape,
  OperationDeclaration,
  ParameterDeclaration,
  ServiceId,
} from './operation.js';
import { BESPOKE_RECORD_OPERATIONS, REG_RECORD_OPERATIONS } from './record-operations.js';

const USERNAME: ParameterDeclaration = {
  name: 'username',
  xmlType: 's:string',
  role: 'username',
  required: true,
  description: 'Account username',
};

const registration = (name = 'RegistrationNumber', rule: InputRule = registrationRule): ParameterDeclaration => ({
  name,
  xmlType: 's:string',
  role: 'key',
  rule,
  required: true,
  description: 'Registration (licence plate) number',
});

/** The default JSON path: one segment per non-username parameter, in catalogue order. */
function defaultJsonPath(parameters: readonly ParameterDeclaration[]): JsonPathShape {
  return {
    segments: parameters
      .filter((p) => p.role !== 'username')
      .map((p) => ({ label: p.name, parameter: p.name, optional: !p.required })),
  };
}

const vehicleDataset = (name: string): DatasetDeclaration => ({ name, kind: 'vehicle' });

interface Options {
  readonly services?: readonly ServiceId[];
  readonly jsonPath?: JsonPathShape;
  readonly dataset?: DatasetDeclaration;
  readonly fieldSubset?: readonly string[];
  readonly cost?: number;
  readonly imageUrl?: ImageUrlRule;
  readonly vehicleDataOmits?: readonly string[];
  /** The country, when the label is not just its name (`UK motorbike`); null for none (a VIN lookup). */
  readonly country?: string | null;
}

function vehicleOperation(
  name: string,
  label: string,
  documentation: string,
  parameters: readonly ParameterDeclaration[],
  options: Options = {},
): OperationDeclaration {
  const all = [...parameters, USERNAME];
  const country = options.country === undefined ? label : options.country;
  return {
    name,
    label,
    ...(country === null ? {} : { country }),
    documentation,
    services: options.services ?? ['reg'],
    parameters: all,
    jsonPath: options.jsonPath ?? defaultJsonPath(all),
    resultType: 'Vehicle',
    cost: options.cost ?? 1,
    dataset: options.dataset ?? vehicleDataset(name),
    ...(options.fieldSubset ? { fieldSubset: options.fieldSubset } : {}),
    ...(options.imageUrl ? { imageUrl: options.imageUrl } : {}),
    ...(options.vehicleDataOmits ? { vehicleDataOmits: options.vehicleDataOmits } : {}),
  };
}

/**
 * The vehicleData children live answers leave out although vehicleJson has them: the recorded
 * reg.asmx/Check (UK) and CheckAustralia answers (shared/reference/torqvoice) have no
 * MakeDescription/ModelDescription in vehicleData. Other operations keep the spec's "present".
 */
const NO_MAKE_MODEL_DESCRIPTION = ['MakeDescription', 'ModelDescription'] as const;

/**
 * How these countries' ImageUrl differs from "Make Model" (compat-notes "Wire differences" 6): UK
 * motorbikes are marked (a live reg.asmx/Check answer for a Motorbike encodes "{Make} {Model}|motorcycle");
 * live Norwegian answers carry no ImageUrl.
 */
const IMAGE_URL_RULES: Readonly<Record<string, ImageUrlRule>> = { Check: 'uk', CheckNorway: 'none' };

/** `Check<Country>(RegistrationNumber, username)` on reg.asmx: the plain plate lookups. */
const PLATE_COUNTRIES: ReadonlyArray<readonly [string, string, InputRule?]> = [
  ['Check', 'UK'],
  ['CheckNetherlands', 'Netherlands'],
  ['CheckNewZealand', 'New Zealand'],
  ['CheckCostaRica', 'Costa Rica'],
  ['CheckSingapore', 'Singapore'],
  ['CheckTunisia', 'Tunisia'],
  ['CheckEcuador', 'Ecuador'],
  ['CheckBolivia', 'Bolivia'],
  ['CheckNigeria', 'Nigeria'],
  ['CheckBelgium', 'Belgium'],
  ['CheckIsrael', 'Israel'],
  ['CheckPeru', 'Peru'],
  ['CheckIndonesia', 'Indonesia'],
  ['CheckLithuania', 'Lithuania'],
  ['CheckSriLanka', 'Sri Lanka'],
  ['CheckPortugal', 'Portugal'],
  ['CheckColombia', 'Colombia'],
  ['CheckDenmark', 'Denmark'],
  ['CheckHungary', 'Hungary'],
  ['CheckFrance', 'France'],
  ['CheckSpain', 'Spain'],
  ['CheckItaly', 'Italy'],
  ['CheckSweden', 'Sweden'],
  ['CheckFinland', 'Finland'],
  ['CheckEstonia', 'Estonia'],
  ['CheckCzechRepublic', 'Czech Republic'],
  ['CheckSlovakia', 'Slovakia'],
  ['CheckCroatia', 'Croatia'],
  ['CheckIreland', 'Ireland'],
  ['CheckNorway', 'Norway'],
  ['CheckIndia', 'India'],
  ['CheckMalaysia', 'Malaysia'],
  ['CheckBrazil', 'Brazil'],
  ['CheckMexico', 'Mexico'],
  ['CheckArgentina', 'Argentina'],
  ['CheckChile', 'Chile'],
  ['CheckSouthAfrica', 'South Africa'],
];

/**
 * The original's other `Check<Country>(RegistrationNumber, username)` lookups on reg.asmx
 * (compat-notes "The original's whole contract"). None has a public source, so each answers from
 * its own imported dataset. A country gets its own plate rule only where its format is certain;
 * the others take any plate of letters and digits, because special, diplomatic and older series
 * vary too much to refuse a plate a client has typed correctly.
 */
const MORE_PLATE_COUNTRIES: ReadonlyArray<readonly [string, string, InputRule?]> = [
  ['CheckUAE', 'UAE'],
  ['CheckRussia', 'Russia', cyrillicPlateRule],
  ['CheckCyprus', 'Cyprus'],
  ['CheckUkraine', 'Ukraine', cyrillicPlateRule],
  ['CheckIceland', 'Iceland'],
  ['CheckLatvia', 'Latvia'],
  ['CheckSwitzerland', 'Switzerland', swissPlateRule],
  ['CheckChina', 'China'],
  ['CheckGreece', 'Greece', greekPlateRule],
  ['CheckKazakhstan', 'Kazakhstan'],
  ['CheckMalta', 'Malta'],
  ['CheckOman', 'Oman'],
  ['CheckPoland', 'Poland'],
  ['CheckRomania', 'Romania'],
  ['CheckSlovenia', 'Slovenia'],
  ['CheckTaiwan', 'Taiwan'],
];

/**
 * reg.asmx's CheckFrance is also bespokeapi.asmx's CheckFrance (same name, parameters and
 * dataset; compat-notes "The original's whole contract"): one declaration on both services.
 */
const ALSO_BESPOKE = new Set(['CheckFrance']);

const plateOperations = [...PLATE_COUNTRIES, ...MORE_PLATE_COUNTRIES].map(([name, label, rule]) =>
  vehicleOperation(name, label, `Looks up a vehicle by its ${label} registration number.`, [registration('RegistrationNumber', rule)], {
    ...(IMAGE_URL_RULES[name] ? { imageUrl: IMAGE_URL_RULES[name] } : {}),
    ...(ALSO_BESPOKE.has(name) ? { services: ['reg', 'bespoke'] } : {}),
    ...(name === 'Check' ? { vehicleDataOmits: NO_MAKE_MODEL_DESCRIPTION } : {}),
  }),
);

const stateParameter = (name: string, rule: ParameterDeclaration['rule'], description: string): ParameterDeclaration => ({
  name,
  xmlType: 's:string',
  role: 'key',
  ...(rule ? { rule } : {}),
  required: true,
  description,
});

const AU_STATE = stateParameter('State', australianStateRule, 'State or territory: NSW, VIC, QLD, SA, WA, TAS, ACT or NT');
const US_STATE = stateParameter('State', usStateRule, 'Two-letter US state code (lower case accepted)');

/** The subset of vehicleJson members a restricted ("Minimal") variant serves; ImageUrl is kept too. */
export const MINIMAL_FIELDS = [
  'Description',
  'RegistrationYear',
  'CarMake',
  'CarModel',
  'MakeDescription',
  'ModelDescription',
] as const;

const specialOperations: OperationDeclaration[] = [
  vehicleOperation('CheckUSA', 'USA', 'Looks up a US vehicle by licence plate and state.', [registration(), US_STATE]),
  vehicleOperation(
    'CheckAustralia',
    'Australia',
    'Looks up an Australian vehicle by registration number and state.',
    [registration(), AU_STATE],
    { dataset: vehicleDataset('CheckAustralia'), imageUrl: 'australia', vehicleDataOmits: NO_MAKE_MODEL_DESCRIPTION },
  ),
  vehicleOperation('CheckCanada', 'Canada', 'Looks up a Canadian vehicle by licence plate and province.', [
    registration(),
    // The vendor's own client sends the province as State, a published SOAP client as state
    // (compat-notes "Wire differences" 2).
    { ...stateParameter('Province', canadianProvinceRule, 'Two-letter province or territory code'), aliases: ['State', 'state'] },
  ]),
  vehicleOperation(
    'CheckPakistan',
    'Pakistan',
    'Looks up a Pakistani vehicle by registration number, province and district.',
    [
      registration(),
      stateParameter('state', pakistanProvinceRule, 'Province (e.g. PUNJAB, SINDH, KPK, BALOCHISTAN, ICT)'),
      stateParameter('district', textRule, 'District of registration (e.g. Lahore)'),
    ],
    {
      jsonPath: {
        segments: [
          { label: 'RegistrationNumber', parameter: 'RegistrationNumber', optional: false },
          { label: 'Province', parameter: 'state', optional: false },
          { label: 'District', parameter: 'district', optional: false },
        ],
      },
    },
  ),
  vehicleOperation(
    'CheckGermany',
    'Germany',
    'Looks up a German vehicle type by its KBA type key (HSN/TSN, e.g. 0005/ALQ).',
    [{ name: 'KBANumber', xmlType: 's:string', role: 'key', rule: kbaNumberRule, required: true, description: 'KBA type key HSN/TSN, e.g. 0005/ALQ' }],
    {
      // The key holds a "/", so the JSON interface splits it over two segments (spec table).
      jsonPath: {
        segments: [
          { label: 'Prefix', parameter: 'KBANumber', optional: false },
          { label: 'Suffix', parameter: 'KBANumber', optional: true },
        ],
        joinWith: '/',
      },
    },
  ),
  vehicleOperation('CheckAustria', 'Austria', 'Looks up an Austrian vehicle type by its national type code (NatCode).', [
    { name: 'NatCode', xmlType: 's:int', role: 'key', rule: int32Rule, required: true, description: 'Austrian national type code (a whole number)' },
  ]),
  // DVLA holds motorbikes with the cars (upstream-sources.md §1); compat-notes "The original's whole contract".
  vehicleOperation('CheckMotorBikeUK', 'UK motorbike', 'Looks up a UK motorbike by its registration number.', [registration()], {
    country: 'UK',
    imageUrl: 'uk-motorbike',
  }),
  vehicleOperation(
    'VinCheck',
    'VIN',
    'Looks up a vehicle by its 17-character vehicle identification number.',
    [{ name: 'Vin', xmlType: 's:string', role: 'key', rule: vinRule, required: true, description: 'Vehicle identification number (17 characters)' }],
    { country: null },
  ),
  {
    name: 'UKMOT',
    label: 'UK MOT',
    country: 'UK',
    documentation: 'Returns the MOT test history of a UK vehicle, newest test first.',
    services: ['reg'],
    parameters: [
      registration(),
      {
        name: 'Model',
        xmlType: 's:string',
        role: 'ignored',
        rule: optionalTextRule,
        required: false,
        description: 'Vehicle make or model; accepted for compatibility, the history is found by registration alone',
      },
      USERNAME,
    ],
    jsonPath: {
      segments: [
        { label: 'RegistrationNumber', parameter: 'RegistrationNumber', optional: false },
        { label: 'Make', parameter: 'Model', optional: true },
      ],
    },
    resultType: 'UKMOTData',
    cost: 1,
    dataset: { name: 'UKMOT', kind: 'mot' },
  },
];

const bespokeOperations: OperationDeclaration[] = [
  vehicleOperation(
    'CheckAustraliaExtensive',
    'Australia',
    'Looks up an Australian vehicle with the extended field set.',
    [registration(), AU_STATE],
    { services: ['bespoke'], dataset: vehicleDataset('CheckAustralia'), imageUrl: 'australia' },
  ),
  vehicleOperation('CheckMotorBikeFrance', 'France motorbike', 'Looks up a French motorbike by its registration number.', [registration()], {
    country: 'France',
    services: ['bespoke'],
  }),
  vehicleOperation('CheckMotorBikeSpain', 'Spain motorbike', 'Looks up a Spanish motorbike by its registration number.', [registration()], {
    country: 'Spain',
    services: ['bespoke'],
  }),
  vehicleOperation(
    'CheckUSAMinimal',
    'USA',
    `Looks up a US vehicle by plate and state, returning only ${MINIMAL_FIELDS.join(', ')} and ImageUrl.`,
    [registration('regNumber'), { ...US_STATE, name: 'state' }],
    { services: ['bespoke'], dataset: vehicleDataset('CheckUSA'), fieldSubset: MINIMAL_FIELDS },
  ),
  vehicleOperation(
    'CheckArgentinaExtensive',
    'Argentina',
    'Looks up an Argentinian vehicle by its registration number, with every field the record has.',
    [registration()],
    { services: ['bespoke'], dataset: vehicleDataset('CheckArgentina') },
  ),
  vehicleOperation(
    'CheckUSADynamic',
    'USA',
    'Looks up a US vehicle by licence plate and state (the CheckUSA records, served whole).',
    [registration('regNumber'), { ...US_STATE, name: 'state' }],
    { services: ['bespoke'], dataset: vehicleDataset('CheckUSA') },
  ),
  vehicleOperation(
    'CheckUSAEdBolian',
    'USA',
    'Looks up a US vehicle by licence plate and state (the CheckUSA records, served whole).',
    [registration(), US_STATE],
    { services: ['bespoke'], dataset: vehicleDataset('CheckUSA') },
  ),
  vehicleOperation(
    'CheckUKMinimal',
    'UK',
    `Looks up a UK vehicle by its registration number, returning only ${MINIMAL_FIELDS.join(', ')} and ImageUrl (the original's "less data" lookup; its price is set per operation, OPERATION_COSTS).`,
    [registration('regNumber')],
    { services: ['bespoke'], dataset: vehicleDataset('Check'), fieldSubset: MINIMAL_FIELDS, imageUrl: 'uk' },
  ),
  vehicleOperation('CheckIOM', 'Isle of Man', 'Looks up an Isle of Man vehicle by its registration number.', [registration('regNumber')], {
    services: ['bespoke'],
  }),
  vehicleOperation('CheckItalyMotorbike', 'Italy motorbike', 'Looks up an Italian motorbike by its registration number.', [registration('regNumber')], {
    country: 'Italy',
    services: ['bespoke'],
  }),
  {
    name: 'CheckEuroNCap',
    label: 'Euro NCAP',
    documentation:
      'Returns the Euro NCAP safety ratings whose make equals Make and whose model contains Model (both case-insensitive). An empty list costs nothing.',
    services: ['bespoke'],
    parameters: [
      { name: 'Make', xmlType: 's:string', role: 'filter', rule: textRule, required: true, description: 'Vehicle make, e.g. Volvo' },
      { name: 'Model', xmlType: 's:string', role: 'filter', rule: optionalTextRule, required: false, description: 'Part of the model name, e.g. XC60' },
      USERNAME,
    ],
    jsonPath: {
      segments: [
        { label: 'Make', parameter: 'Make', optional: false },
        { label: 'Model', parameter: 'Model', optional: true },
      ],
    },
    resultType: 'ArrayOfPreAssessmentSearchResult',
    cost: 1,
    dataset: { name: 'CheckEuroNCap', kind: 'ncap' },
  },
];

/** Every operation, in the order the services list them. */
export const OPERATIONS: readonly OperationDeclaration[] = [
  ...plateOperations,
  ...specialOperations,
  ...REG_RECORD_OPERATIONS,
  ...bespokeOperations,
  ...BESPOKE_RECORD_OPERATIONS,
];
