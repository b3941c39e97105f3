import type { MotDocument, UkTest } from '../../results/result-documents.js';
import type { DvlaVehicle } from '../dvla/dvla-vehicle.js';
import { dottedDate, longDate, titleCase, yearOf } from '../dvla/uk-text.js';
import type { MotTestRecord, MotVehicle } from './mot-history.js';

/**
 * Defect kinds that failed the test. `PRS` (pass after rectification at the station) was a failure
 * put right within the hour, so it is a failure reason too. Every other kind (ADVISORY, MINOR,
 * USER ENTERED, SYSTEM GENERATED, NON SPECIFIC, and any kind not known yet) is an advisory.
 */
export const FAILURE_KINDS: ReadonlySet<string> = new Set(['FAIL', 'MAJOR', 'DANGEROUS', 'PRS']);

const LEGACY_DATE_TIME = /^(\d{4})\.(\d{2})\.(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

const LONDON = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/**
 * UKMOT TestDate, "yyyy.MM.dd HH:mm:ss" (compat-notes "Data shapes"). The new API gives UTC
 * ("2023-02-17T09:17:46.000Z"); it is shown in UK time, as the legacy API and MOT certificates
 * show it. Legacy values pass through; unreadable ones are returned as given.
 */
export function testDate(text: string): string {
  if (LEGACY_DATE_TIME.test(text)) return text;
  const local = LOCAL_DATE_TIME.exec(text);
  if (local) return `${local[1] ?? ''}.${local[2] ?? ''}.${local[3] ?? ''} ${local[4] ?? '00'}:${local[5] ?? '00'}:${local[6] ?? '00'}`;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return text;
  const p = Object.fromEntries(LONDON.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return `${p.year ?? ''}.${p.month ?? ''}.${p.day ?? ''} ${p.hour ?? ''}:${p.minute ?? ''}:${p.second ?? ''}`;
}

/** Milliseconds of a completedDate in either format, for newest-first order; unknown sorts last. */
function sortTime(text: string | undefined): number {
  if (text === undefined) return Number.NEGATIVE_INFINITY;
  const legacy = LEGACY_DATE_TIME.exec(text);
  const ms = legacy ? Date.parse(`${legacy[1] ?? ''}-${legacy[2] ?? ''}-${legacy[3] ?? ''}T${legacy[4] ?? ''}:${legacy[5] ?? ''}:${legacy[6] ?? ''}Z`) : Date.parse(text);
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
}

function result(testResult: string | undefined): string | undefined {
  if (testResult === undefined) return undefined;
  const upper = testResult.toUpperCase();
  if (upper === 'PASSED' || upper === 'PASS') return 'Pass';
  if (upper === 'FAILED' || upper === 'FAIL') return 'Fail';
  return titleCase(testResult);
}

function ukTest(test: MotTestRecord): UkTest {
  const failures: string[] = [];
  const advisories: string[] = [];
  for (const d of test.defects) {
    if (d.dangerous === true || FAILURE_KINDS.has((d.type ?? '').toUpperCase())) failures.push(d.text);
    else advisories.push(d.text);
  }
  const read = test.odometerResultType === undefined || test.odometerResultType.toUpperCase() === 'READ';
  const out: UkTest = {};
  if (test.completedDate !== undefined) out.TestDate = testDate(test.completedDate);
  if (test.expiryDate !== undefined) out.ExpiryDate = dottedDate(test.expiryDate);
  const r = result(test.testResult);
  if (r !== undefined) out.Result = r;
  if (read && test.odometerValue !== undefined) out.Odometer = test.odometerValue;
  if (test.motTestNumber !== undefined) out.TestNumber = test.motTestNumber;
  out.FailureReasons = failures;
  out.Advisories = advisories;
  return out;
}

/**
 * The UKMOT answer from a DVSA MOT history, with the tax date and DVLA's statuses when a DVLA
 * answer is given. Table: docs/providers.md "UKMOT from DVSA".
 */
export function ukMotDocument(mot: MotVehicle, dvla?: DvlaVehicle): MotDocument {
  const tests = [...mot.motTests].sort((a, b) => sortTime(b.completedDate) - sortTime(a.completedDate));
  const newest = tests[0];
  const lastPass = tests.find((t) => result(t.testResult) === 'Pass' && t.expiryDate !== undefined);
  const unit = newest?.odometerUnit?.toLowerCase();
  // The sample dataset's order first (Make ... MotExpiryDate), then what only the new API gives.
  const extended: Record<string, string | undefined> = {
    Make: mot.make ?? dvla?.make,
    Model: mot.model,
    Colour: mot.primaryColour ?? (dvla?.colour !== undefined ? titleCase(dvla.colour) : undefined),
    FuelType: mot.fuelType ?? (dvla?.fuelType !== undefined ? titleCase(dvla.fuelType) : undefined),
    EngineSize: mot.engineSize ?? (dvla?.engineCapacity !== undefined ? String(dvla.engineCapacity) : undefined),
    FirstUsedDate: mot.firstUsedDate !== undefined ? dottedDate(mot.firstUsedDate) : undefined,
    YearOfManufacture: dvla?.yearOfManufacture !== undefined ? String(dvla.yearOfManufacture) : mot.manufactureYear !== undefined ? String(mot.manufactureYear) : yearOf(mot.manufactureDate),
    Co2Emissions: dvla?.co2Emissions !== undefined ? String(dvla.co2Emissions) : undefined,
    TaxStatus: dvla?.taxStatus,
    MotStatus: dvla?.motStatus,
    MotExpiryDate: lastPass?.expiryDate !== undefined ? dottedDate(lastPass.expiryDate) : dvla?.motExpiryDate !== undefined ? dottedDate(dvla.motExpiryDate) : undefined,
    Registration: mot.registration,
    RegistrationDate: mot.registrationDate !== undefined ? dottedDate(mot.registrationDate) : undefined,
    ManufactureDate: mot.manufactureDate !== undefined ? dottedDate(mot.manufactureDate) : undefined,
    MotTestDueDate: mot.motTestDueDate !== undefined ? dottedDate(mot.motTestDueDate) : undefined,
    OdometerUnit: unit === 'mi' || unit === 'km' ? unit : undefined,
    HasOutstandingRecall: mot.hasOutstandingRecall,
  };
  const document: MotDocument = {
    Tests: tests.map(ukTest),
    ExtendedInformation: Object.fromEntries(Object.entries(extended).filter((e): e is [string, string] => e[1] !== undefined)),
  };
  if (dvla?.taxDueDate !== undefined) document.taxDate = longDate(dvla.taxDueDate);
  return document;
}
