import { asObject, booleanField, numberField, objectArrayField, stringField, textField, withoutUndefined, type JsonObject } from '../upstream/json-reader.js';

/** One defect of a test; `type` is an open string (upstream-sources.md §2b lists nine kinds). */
export interface MotDefect {
  readonly text: string;
  readonly type?: string;
  readonly dangerous?: boolean;
}

/** One MOT test: `DVSAMotTest`, `DVANIMotTest` (no defects) or `CVSMotTest` (adds `location`). */
export interface MotTestRecord {
  /** ISO date-time (new API) or `yyyy.MM.dd HH:mm:ss` (legacy API). */
  readonly completedDate?: string;
  /** `PASSED` or `FAILED`. */
  readonly testResult?: string;
  readonly expiryDate?: string;
  readonly odometerValue?: string;
  /** `MI`/`KM` (new API), `mi`/`km` (legacy). */
  readonly odometerUnit?: string;
  /** `READ`, `UNREADABLE`, `NO_ODOMETER`. */
  readonly odometerResultType?: string;
  readonly motTestNumber?: string;
  readonly dataSource?: string;
  readonly defects: readonly MotDefect[];
}

/** `VehicleWithMotResponse` or `NewRegVehicleResponse` (no test yet: `motTestDueDate`). */
export interface MotVehicle {
  readonly registration?: string;
  readonly make?: string;
  readonly model?: string;
  readonly fuelType?: string;
  readonly primaryColour?: string;
  readonly firstUsedDate?: string;
  readonly registrationDate?: string;
  readonly manufactureDate?: string;
  readonly manufactureYear?: number;
  readonly engineSize?: string;
  readonly motTestDueDate?: string;
  /** `Yes`, `No`, `Unknown`, `Unavailable`. */
  readonly hasOutstandingRecall?: string;
  readonly motTests: readonly MotTestRecord[];
}

function readDefect(o: JsonObject): MotDefect | undefined {
  const text = stringField(o, 'text');
  if (text === undefined) return undefined;
  return withoutUndefined<MotDefect>({ text, type: stringField(o, 'type'), dangerous: booleanField(o, 'dangerous') });
}

function readTest(o: JsonObject): MotTestRecord {
  // The legacy API called the defects `rfrAndComments` (upstream-sources.md §2a).
  const defects = [...objectArrayField(o, 'defects'), ...objectArrayField(o, 'rfrAndComments')].map(readDefect).filter((d) => d !== undefined);
  return withoutUndefined<MotTestRecord>({
    completedDate: stringField(o, 'completedDate'),
    testResult: stringField(o, 'testResult'),
    expiryDate: stringField(o, 'expiryDate'),
    odometerValue: textField(o, 'odometerValue'),
    odometerUnit: stringField(o, 'odometerUnit'),
    odometerResultType: stringField(o, 'odometerResultType'),
    motTestNumber: textField(o, 'motTestNumber'),
    dataSource: stringField(o, 'dataSource'),
    defects,
  });
}

/**
 * Reads an MOT history answer (or a cached one) field by field. Tolerates the legacy format too
 * (an array of vehicles, `rfrAndComments`), since operators may point DVSA_BASE_URL at a proxy
 * that still speaks it.
 */
export function readMotVehicle(payload: unknown): MotVehicle {
  const o = asObject(Array.isArray(payload) ? (payload as unknown[])[0] : payload) ?? {};
  return withoutUndefined<MotVehicle>({
    registration: stringField(o, 'registration'),
    make: stringField(o, 'make'),
    model: stringField(o, 'model'),
    fuelType: stringField(o, 'fuelType'),
    primaryColour: stringField(o, 'primaryColour'),
    firstUsedDate: stringField(o, 'firstUsedDate'),
    registrationDate: stringField(o, 'registrationDate'),
    manufactureDate: stringField(o, 'manufactureDate'),
    manufactureYear: numberField(o, 'manufactureYear'),
    engineSize: textField(o, 'engineSize'),
    motTestDueDate: stringField(o, 'motTestDueDate') ?? stringField(o, 'motTestExpiryDate'),
    hasOutstandingRecall: stringField(o, 'hasOutstandingRecall'),
    motTests: objectArrayField(o, 'motTests').map(readTest),
  });
}
