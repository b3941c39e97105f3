/**
 * The `Check<Country>` plate operations CarsXE's plate decoder serves (commercial-upstreams.md
 * §1.1, §1.3), with the ISO country code it takes and how the original shapes that country's
 * answer (compat-notes "Data shapes"). CarsXE lists 57 countries, but its documentation's country
 * table is readable only as far as AR; the countries here are those the documentation or the
 * spec names as listed (AE, AR, GB, AU, FR, ES, IT, NL, US, CA, PK, and the legacy v1 codes IR,
 * IND, MX, NZ, BR) that our catalogue has a plate operation for. docs/providers.md "CarsXE".
 */
export interface CarsxeCountry {
  /** `country=` (ISO 3166-1 alpha-2). */
  readonly country: string;
  /** Which key parameter goes as `state=` (US, AU, CA) or `district=` (PK), by its position among the key parameters. */
  readonly region?: 'state' | 'district';
  /** The VIN's member in this country's vehicleJson (the original misspells it in most countries). */
  readonly vinKey: 'VechileIdentificationNumber' | 'VehicleIdentificationNumber' | 'VIN' | 'Vin';
  /**
   * Description style: `year-make-model` ("2017 Kia Forte", USA/NZ), `uk` ("2019 Ford Fiesta,
   * 998CC Petrol"), or `as-sent` (CarsXE's `description`, which is "{MAKE} {MODEL}" for most).
   */
  readonly description: 'year-make-model' | 'uk' | 'as-sent';
  /** Whether MakeDescription/ModelDescription are plain text (UK) rather than wrapped. */
  readonly plainDescriptions?: boolean;
}

const plain = (country: string, vinKey: CarsxeCountry['vinKey'] = 'VechileIdentificationNumber'): CarsxeCountry => ({ country, vinKey, description: 'as-sent' });

export const CARSXE_PLATE_OPERATIONS: Readonly<Record<string, CarsxeCountry>> = {
  CheckUSA: { country: 'US', region: 'state', vinKey: 'VechileIdentificationNumber', description: 'year-make-model' },
  CheckUSAMinimal: { country: 'US', region: 'state', vinKey: 'VechileIdentificationNumber', description: 'year-make-model' },
  CheckUSADynamic: { country: 'US', region: 'state', vinKey: 'VechileIdentificationNumber', description: 'year-make-model' },
  CheckUSAEdBolian: { country: 'US', region: 'state', vinKey: 'VechileIdentificationNumber', description: 'year-make-model' },
  CheckCanada: { country: 'CA', region: 'state', vinKey: 'VechileIdentificationNumber', description: 'year-make-model' },
  CheckAustralia: { country: 'AU', region: 'state', vinKey: 'VechileIdentificationNumber', description: 'as-sent' },
  CheckAustraliaExtensive: { country: 'AU', region: 'state', vinKey: 'VechileIdentificationNumber', description: 'as-sent' },
  CheckNewZealand: { country: 'NZ', vinKey: 'VechileIdentificationNumber', description: 'year-make-model' },
  Check: { country: 'GB', vinKey: 'VehicleIdentificationNumber', description: 'uk', plainDescriptions: true },
  CheckUKMinimal: { country: 'GB', vinKey: 'VehicleIdentificationNumber', description: 'uk', plainDescriptions: true },
  CheckPakistan: { country: 'PK', region: 'district', vinKey: 'VechileIdentificationNumber', description: 'as-sent' },
  CheckUAE: plain('AE'),
  CheckArgentina: plain('AR'),
  CheckArgentinaExtensive: plain('AR'),
  CheckFrance: plain('FR'),
  CheckSpain: plain('ES'),
  CheckItaly: plain('IT', 'Vin'),
  CheckNetherlands: plain('NL'),
  CheckIreland: plain('IE', 'VIN'),
  CheckIndia: plain('IN'),
  CheckMexico: plain('MX'),
  CheckBrazil: plain('BR', 'Vin'),
};
