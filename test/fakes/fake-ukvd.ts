import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake of UK Vehicle Data's r2 lookup API (commercial-upstreams.md §2.2, from the vendor's
 * generated OpenAPI document "UK Vehicle Data Limited - VehicleDetails" v1.0.8.0): `GET
 * /r2/lookup?ApiKey=&PackageName=&Vrm=` (names case-insensitive, as clients send both), answering
 * `RequestInformation`, `ResponseInformation`, `BillingInformation` and `Results`, with r2's
 * StatusCode and BillingResult enums. It keeps an account balance: every billed answer takes the
 * package's price off it, and an answer the balance cannot pay is a BillingFailure with
 * InsufficientFunds, as r2 answers. Plates script every outcome of the spec's §5 table.
 */

/** Package prices as client code notes them (§2.2, "client-noted prices"). */
export const UKVD_PRICES: Readonly<Record<string, number>> = { VehicleDetails: 0.05, MotHistoryDetails: 0.04 };

/** The plates of each outcome. */
export const UKVD_PLATES = {
  /** A car with VehicleDetails and ModelDetails (values from the reseller dump quoted in §2.2). */
  car: 'AB15AUD',
  /** A motorbike: VehicleDetails only (ModelDetails NoResultsFound). */
  motorbike: 'MC19BKE',
  /** Code 1: VehicleDetails succeeded, ModelDetails failed (ThirdPartyFailure), part refunded. */
  partial: 'PA12RTL',
  /** The account may not see the VIN ("Permission Required"). */
  maskedVin: 'PR12VIN',
  notFound: 'NF12NFD',
  noMatch: 'NM12NMF',
  noDvlaData: 'ND12DVL',
  retained: 'RT12RET',
  badInput: 'BD12BAD',
  dailyLimit: 'QT12DAY',
  concurrency: 'QT12CON',
  outOfFunds: 'FU12NDS',
  down: 'DN12DWN',
  unavailable: 'TP12UNV',
  slow: 'SL12SLW',
  html: 'HT12HTM',
  htmlOk: 'HT20HTM',
  restricted: 'PK12RST',
} as const;

export interface FakeUkvdOptions {
  readonly apiKey: string;
  /** Starting account balance (£); default 10. */
  readonly balance?: number;
  /** How long the slow plate takes; default 150 ms. */
  readonly slowMs?: number;
}

type Json = Record<string, unknown>;

const vehicleDetails = (over: Json = {}): Json => ({
  VehicleIdentification: {
    Vrm: UKVD_PLATES.car,
    Vin: 'WAUZZZ4G6FN012345',
    VinLast5: '12345',
    DvlaMake: 'AUDI',
    DvlaModel: 'A7 S LINE BLACK ED TDI QUAT SA',
    DvlaWheelPlan: '2 AXLE RIGID BODY',
    DateFirstRegisteredInUk: '2015-10-13T00:00:00Z',
    DateFirstRegistered: '2015-10-13T00:00:00Z',
    DateOfManufacture: '2015-09-30T00:00:00Z',
    YearOfManufacture: 2015,
    VehicleUsedBeforeFirstRegistration: false,
    EngineNumber: 'CVU012345',
    PreviousVrmNi: '',
    DvlaBodyType: '5 DOOR HATCHBACK',
    DvlaFuelType: 'HEAVY OIL',
  },
  VehicleStatus: {
    IsImported: false,
    IsImportedFromNi: false,
    IsImportedFromOutsideEu: false,
    DateImported: null,
    CertificateOfDestructionIssued: false,
    IsExported: false,
    DateExported: null,
    IsScrapped: false,
    IsUnscrapped: false,
    DateScrapped: null,
    DvlaCherishedTransferMarker: null,
    VehicleExciseDutyDetails: { DvlaCo2: 142, DvlaCo2Band: 'F', DvlaBand: 'F', VedRate: { FirstYear: { SixMonths: null, TwelveMonths: null }, Standard: { SixMonths: 115.5, TwelveMonths: 210 } } },
  },
  VehicleHistory: {
    ColourDetails: { CurrentColour: 'BLACK', NumberOfColourChanges: 0, OriginalColour: null, PreviousColour: null, LatestColourChangeDate: null },
    KeeperChangeList: [{ NumberOfPreviousKeepers: 2, KeeperStartDate: '2019-04-01T00:00:00Z', PreviousKeeperDisposalDate: '2019-03-28T00:00:00Z' }],
    PlateChangeList: [],
    V5cCertificateList: [{ IssueDate: '2019-04-03T00:00:00Z' }],
  },
  DvlaTechnicalDetails: { NumberOfSeats: 5, EngineCapacityCc: 2967, GrossWeightKg: 2435, MaxNetPowerKw: 160, MassInServiceKg: 1900, PowerToWeightRatio: 0, MaxPermissibleBrakedTrailerMassKg: 2000, MaxPermissibleUnbrakedTrailerMassKg: 750 },
  StatusCode: 0,
  StatusMessage: 'Success',
  DocumentVersion: 1,
  ...over,
});

const modelDetails = (): Json => ({
  ModelIdentification: { Make: 'Audi', Range: 'A7', Model: 'A7 Sportback TDI Black Edition Quattro Semi-Auto', ModelVariant: null, Series: '4GF', Mark: 1, StartDate: '2014-01-01T00:00:00Z', EndDate: null, CountryOfOrigin: 'Germany', VariantCode: null },
  ModelClassification: { TypeApprovalCategory: 'M1', MarketSectorCode: 'AA', VehicleClass: 'Car', TaxationClass: 'Car' },
  BodyDetails: { BodyStyle: 'Coupe', NumberOfDoors: 5, NumberOfSeats: 5, FuelTankCapacityLitres: 73 },
  Powertrain: { PowerSource: 'ICE', IceDetails: { EngineCapacityCc: 2967, EngineDescription: '3.0 TDI' }, Transmission: { TransmissionType: 'Automatic', NumberOfGears: 8, DriveType: '4X4' } },
  Emissions: { EuroStatus: '6b', ManufacturerCo2: 142 },
  Performance: { Power: { Bhp: 215, Ps: 218, Kw: 160 } },
  StatusCode: 0,
  StatusMessage: 'Success',
  DocumentVersion: 1,
});

const motorbikeDetails = (): Json =>
  vehicleDetails({
    VehicleIdentification: {
      Vrm: UKVD_PLATES.motorbike,
      Vin: 'SMTD40HL0KT123456',
      DvlaMake: 'TRIUMPH',
      DvlaModel: 'STREET TRIPLE RS',
      DvlaWheelPlan: '2 WHEEL',
      DateFirstRegistered: '2019-04-02T00:00:00Z',
      YearOfManufacture: 2019,
      DvlaBodyType: 'MOTORCYCLE',
      DvlaFuelType: 'PETROL',
    },
    VehicleHistory: { ColourDetails: { CurrentColour: 'BLACK' } },
    DvlaTechnicalDetails: { NumberOfSeats: 2, EngineCapacityCc: 765 },
  });

const motHistory = (): Json => ({
  Make: 'AUDI',
  Model: 'A7',
  FuelType: 'Diesel',
  Colour: 'Black',
  MotDueDate: '2026-10-12T00:00:00Z',
  FirstUsedDate: '2015-10-13T00:00:00Z',
  LatestTestDate: '2025-10-10T09:17:46Z',
  DaysSinceLastMot: 49,
  MotTestDetailsList: [
    {
      TestDate: '2024-10-01T14:02:10Z',
      ExpiryDate: null,
      TestPassed: false,
      OdometerReading: 81234,
      OdometerUnit: 'Mi',
      TestNumber: '412345678901',
      IsRetest: false,
      AnnotationList: [
        { Type: 'MAJOR', Text: 'Nearside Front Tyre tread depth below requirements of 1.6mm (5.2.3 (e))', IsDangerous: false },
        { Type: 'DANGEROUS', Text: 'Offside Front Brake pipe excessively corroded (1.1.11 (c))', IsDangerous: true },
        { Type: 'ADVISORY', Text: 'Oil leak, but not excessive', IsDangerous: false },
      ],
    },
    {
      TestDate: '2025-10-10T09:17:46Z',
      ExpiryDate: '2026-10-12T00:00:00Z',
      TestPassed: true,
      OdometerReading: 89012,
      OdometerUnit: 'Mi',
      TestNumber: '512345678902',
      IsRetest: false,
      AnnotationList: [{ Type: 'MINOR', Text: 'Front Wiper blade defective', IsDangerous: false }],
    },
  ],
  StatusCode: 0,
  StatusMessage: 'Success',
});

/** r2's information blocks around `Results` (the same blocks `ResponseWithoutResults` carries with `Results: {}`). */
function envelope(packageName: string, vrm: string, code: number, message: string, billing: Json, results: Json): Json {
  return {
    RequestInformation: { PackageName: packageName, SearchTerm: vrm, SearchType: 'Vrm', RequestIp: '127.0.0.1' },
    ResponseInformation: { StatusCode: code, StatusMessage: message, IsSuccessStatusCode: code === 0 || code === 1, QueryTimeMs: 42, ResponseId: '3f2c1e4d-0000-4000-8000-000000000001' },
    BillingInformation: { BillingTransactionId: null, AccountType: 1, AccountBalance: null, TransactionCost: null, BillingResult: 0, BillingResultMessage: 'Success', RefundAmount: null, RefundResult: null, RefundResultMessage: null, ...billing },
    Results: results,
  };
}

/** The fake: `balance` is the account's, read and set by tests. */
export class FakeUkvd {
  balance: number;

  private constructor(
    readonly server: FakeHttpServer,
    readonly options: FakeUkvdOptions,
  ) {
    this.balance = options.balance ?? 10;
  }

  static async start(options: FakeUkvdOptions): Promise<FakeUkvd> {
    const holder: { fake?: FakeUkvd } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeUkvd(server, options);
    return holder.fake;
  }

  /** UKVD_BASE_URL for the service. */
  get baseUrl(): string {
    return this.server.url;
  }

  /** Lookups received, for one plate when given. */
  calls(vrm?: string): number {
    return this.server.requests.filter((r) => r.path === '/r2/lookup' && (vrm === undefined || new URLSearchParams(r.url.split('?')[1] ?? '').get('Vrm') === vrm)).length;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    if (req.method !== 'GET' || req.path !== '/r2/lookup') return { status: 404, text: 'Not Found' };
    const query = new URLSearchParams(req.url.split('?')[1] ?? '');
    const param = (name: string): string | undefined => [...query.entries()].find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
    const packageName = param('PackageName') ?? '';
    const vrm = (param('Vrm') ?? '').toUpperCase();
    const json = (status: number, code: number, message: string, billing: Json = {}, results: Json = {}): FakeResponse => ({ status, json: envelope(packageName, vrm, code, message, billing, results) });

    if (param('ApiKey') !== this.options.apiKey) return json(401, 7, 'UnknownApiKey', { BillingResult: 3, BillingResultMessage: 'BillingAccountNotFound' });
    if (!/^[a-zA-Z0-9]{1,80}$/.test(packageName)) return json(200, 12, 'BadlyFormedUrl');
    const price = UKVD_PRICES[packageName];
    if (price === undefined) return json(200, 8, 'UnknownPackage');
    if (vrm === '') return json(200, 14, 'NoSearchTermFound');

    const P = UKVD_PLATES;
    switch (vrm) {
      case P.down:
        return json(500, 10, 'ThirdPartyFailure');
      case P.unavailable:
        return json(200, 17, 'InformationTemporarilyUnavailable');
      case P.dailyLimit:
        return json(429, 20, 'ApiKeyReachedDailyLimit');
      case P.concurrency:
        return json(429, 19, 'ApiKeyReachedConcurrentLimit');
      case P.html:
        return { status: 503, text: '<!DOCTYPE html><html><body><h1>503 Service Unavailable</h1></body></html>', headers: { 'content-type': 'text/html' } };
      case P.htmlOk:
        return { status: 200, text: '<html><body>Scheduled maintenance</body></html>', headers: { 'content-type': 'text/html' } };
      case P.badInput:
        return json(200, 13, 'InvalidSearchTerm');
      case P.notFound:
        return json(200, 2, 'NoResultsFound');
      case P.noMatch:
        return json(200, 26, 'NoMatchFound');
      case P.noDvlaData:
        return json(200, 25, 'NoDvlaRegistrationDataAvailable');
      case P.retained:
        return json(200, 21, 'PlateInRetentionLastVehicleReturned');
      case P.restricted:
        return json(200, 18, 'PackageRestrictedFromApiKey');
      case P.outOfFunds:
        return json(200, 3, 'BillingFailure', { BillingResult: 1, BillingResultMessage: 'InsufficientFunds', AccountBalance: this.balance });
      default:
        break;
    }
    const results = this.results(packageName, vrm);
    if (results === undefined) return json(200, 2, 'NoResultsFound');
    // Billed only when the balance pays the package (PayGo, AccountType 1).
    if (this.balance < price) return json(200, 3, 'BillingFailure', { BillingResult: 1, BillingResultMessage: 'InsufficientFunds', AccountBalance: this.balance });
    const partial = vrm === P.partial;
    const refund = partial ? 0.02 : null;
    this.balance = Math.round((this.balance - price + (refund ?? 0)) * 100) / 100;
    const billing = {
      BillingTransactionId: '9b1c2d3e-0000-4000-8000-000000000002',
      AccountBalance: this.balance,
      TransactionCost: price,
      RefundAmount: refund,
      RefundResult: partial ? 0 : null,
      RefundResultMessage: partial ? 'Success' : null,
    };
    const response = json(200, partial ? 1 : 0, partial ? 'SuccessWithResultsBlockWarnings' : 'Success', billing, results);
    return vrm === P.slow ? { ...response, delayMs: this.options.slowMs ?? 150 } : response;
  }

  /** The package's Results for a plate, or undefined when r2 knows no such vehicle. */
  private results(packageName: string, vrm: string): Json | undefined {
    const P = UKVD_PLATES;
    if (packageName === 'MotHistoryDetails') {
      return vrm === P.car || vrm === P.slow ? { VehicleCodes: { Uvc: 'M-AUD0123' }, MotHistoryDetails: motHistory() } : undefined;
    }
    const codes = { VehicleCodes: { Uvc: 'M-AUD0123' } };
    switch (vrm) {
      case P.car:
      case P.slow:
        return { ...codes, VehicleDetails: vehicleDetails({ VehicleIdentification: { ...(vehicleDetails().VehicleIdentification as Json), Vrm: vrm } }), ModelDetails: modelDetails() };
      case P.motorbike:
        return { ...codes, VehicleDetails: motorbikeDetails(), ModelDetails: { StatusCode: 2, StatusMessage: 'NoResultsFound' } };
      case P.partial:
        return { ...codes, VehicleDetails: vehicleDetails(), ModelDetails: { StatusCode: 10, StatusMessage: 'ThirdPartyFailure' } };
      case P.maskedVin:
        return { ...codes, VehicleDetails: vehicleDetails({ VehicleIdentification: { ...(vehicleDetails().VehicleIdentification as Json), Vrm: vrm, Vin: 'Permission Required' } }) };
      default:
        return undefined;
    }
  }
}
