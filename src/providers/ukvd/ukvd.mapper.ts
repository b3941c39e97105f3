import type { MotDocument, UkTest, VehicleDocument } from '../../results/result-documents.js';
import { ukDescription, wrapped } from '../dvla/uk-vehicle.mapper.js';
import { dottedDate, titleCase, yearOf } from '../dvla/uk-text.js';
import { FAILURE_KINDS, testDate } from '../dvsa-mot/ukmot.mapper.js';
import { asObject, booleanField, numberField, objectArrayField, stringField, textField, withoutUndefined, type JsonObject } from '../upstream/json-reader.js';

/** A nested object by path, or undefined where any step is missing. */
function at(object: JsonObject | undefined, ...path: string[]): JsonObject | undefined {
  let current = object;
  for (const step of path) current = current ? asObject(current[step]) : undefined;
  return current;
}

/** A block of `Results` only when it succeeded (its own StatusCode 0, or none given). */
function block(results: JsonObject, name: string): JsonObject | undefined {
  const b = asObject(results[name]);
  const code = b ? numberField(b, 'StatusCode') : undefined;
  return code === undefined || code === 0 ? b : undefined;
}

/**
 * r2 masks the VIN for accounts not entitled to it (a client treats "Permission Required" as
 * empty, commercial-upstreams.md §2.2): a VIN is 17 letters and digits, anything else is left out.
 */
function vinOf(text: string | undefined): string | undefined {
  return text !== undefined && /^[A-HJ-NPR-Z0-9]{17}$/i.test(text) ? text.toUpperCase() : undefined;
}

/** "2015-10-13T00:00:00Z" -> "2015-10". */
function monthOf(text: string | undefined): string | undefined {
  const m = text === undefined ? null : /^(\d{4}-\d{2})/.exec(text);
  return m?.[1];
}

/**
 * The UK vehicleJson of `Check`, `CheckMotorBikeUK` and `CheckUKMinimal` from r2's VehicleDetails
 * block, with the ModelDetails members where the package carries that block (doors, seats, body
 * style, transmission). Shaped as the other UK sources shape it (DVLA's mapper, the original's
 * recorded UK answers): Description "2019 Ford Fiesta Zetec, 998CC Petrol, 5DR, Manual", wrapped
 * make, model, engine and fuel, title-cased fuel and colour. Table: docs/providers.md "UK Vehicle Data".
 */
export function ukvdVehicleJson(results: JsonObject): VehicleDocument {
  const details = block(results, 'VehicleDetails') ?? {};
  const id = at(details, 'VehicleIdentification') ?? {};
  const status = at(details, 'VehicleStatus');
  const technical = at(details, 'DvlaTechnicalDetails');
  const colours = at(details, 'VehicleHistory', 'ColourDetails');
  const model = block(results, 'ModelDetails');
  const body = at(model, 'BodyDetails');
  const transmission = at(model, 'Powertrain', 'Transmission');

  const make = stringField(id, 'DvlaMake');
  const modelName = stringField(id, 'DvlaModel');
  const cc = (technical && textField(technical, 'EngineCapacityCc')) ?? textField(at(model, 'Powertrain', 'IceDetails') ?? {}, 'EngineCapacityCc');
  const fuel = stringField(id, 'DvlaFuelType');
  const firstRegistered = stringField(id, 'DateFirstRegistered') ?? stringField(id, 'DateFirstRegisteredInUk');
  const year = yearOf(firstRegistered) ?? textField(id, 'YearOfManufacture');
  const doors = body ? textField(body, 'NumberOfDoors') : undefined;
  const seats = (body && numberField(body, 'NumberOfSeats')) ?? (technical ? numberField(technical, 'NumberOfSeats') : undefined);
  const gearbox = transmission ? stringField(transmission, 'TransmissionType') : undefined;
  const bodyStyle = (body && stringField(body, 'BodyStyle')) ?? stringField(id, 'DvlaBodyType');
  const colour = colours ? stringField(colours, 'CurrentColour') : undefined;
  const head = ukDescription(year, make, modelName, cc, fuel);
  const description = head === undefined ? undefined : [head, doors !== undefined ? `${doors}DR` : undefined, gearbox].filter((p) => p !== undefined).join(', ');

  return withoutUndefined<VehicleDocument>({
    Description: description,
    RegistrationYear: year,
    CarMake: make !== undefined ? wrapped(make) : undefined,
    CarModel: modelName !== undefined ? wrapped(modelName) : undefined,
    EngineSize: cc !== undefined ? wrapped(cc) : undefined,
    FuelType: fuel !== undefined ? wrapped(titleCase(fuel)) : undefined,
    MakeDescription: make,
    ModelDescription: modelName,
    NumberOfSeats: seats !== undefined ? { CurrentTextValue: seats } : undefined,
    Transmission: gearbox !== undefined ? wrapped(gearbox) : undefined,
    NumberOfDoors: doors !== undefined ? wrapped(doors) : undefined,
    BodyStyle: bodyStyle !== undefined ? wrapped(bodyStyle) : undefined,
    Colour: colour !== undefined ? titleCase(colour) : undefined,
    VehicleIdentificationNumber: vinOf(stringField(id, 'Vin')),
    // The DVLA fields the DVLA source serves too, under the same names (docs/providers.md).
    YearOfManufacture: numberField(id, 'YearOfManufacture'),
    MonthOfFirstRegistration: monthOf(firstRegistered),
    Co2Emissions: numberField(at(status, 'VehicleExciseDutyDetails') ?? {}, 'DvlaCo2'),
    EuroStatus: stringField(at(model, 'Emissions') ?? {}, 'EuroStatus'),
    TypeApproval: stringField(at(model, 'ModelClassification') ?? {}, 'TypeApprovalCategory'),
    Wheelplan: stringField(id, 'DvlaWheelPlan'),
    MarkedForExport: status ? booleanField(status, 'IsExported') : undefined,
  });
}

/** r2 dates read as ISO ("2023-02-17T09:17:46Z"), dotted, or the legacy API's DD/MM/YYYY. */
function isoish(text: string): string {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})(.*)$/.exec(text);
  return m ? `${m[3] ?? ''}-${m[2] ?? ''}-${m[1] ?? ''}${m[4] ?? ''}` : text;
}

function sortTime(text: string | undefined): number {
  const ms = text === undefined ? Number.NaN : Date.parse(isoish(text).replace(/^(\d{4})\.(\d{2})\.(\d{2})/, '$1-$2-$3'));
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
}

function motTest(test: JsonObject): UkTest {
  const failures: string[] = [];
  const advisories: string[] = [];
  for (const note of objectArrayField(test, 'AnnotationList')) {
    const text = stringField(note, 'Text');
    if (text === undefined) continue;
    if (booleanField(note, 'IsDangerous') === true || FAILURE_KINDS.has((stringField(note, 'Type') ?? '').toUpperCase())) failures.push(text);
    else advisories.push(text);
  }
  const out: UkTest = {};
  const date = stringField(test, 'TestDate');
  if (date !== undefined) out.TestDate = testDate(isoish(date));
  const expiry = stringField(test, 'ExpiryDate');
  if (expiry !== undefined) out.ExpiryDate = dottedDate(isoish(expiry));
  const passed = booleanField(test, 'TestPassed');
  if (passed !== undefined) out.Result = passed ? 'Pass' : 'Fail';
  const odometer = textField(test, 'OdometerReading');
  if (odometer !== undefined) out.Odometer = odometer;
  const number = textField(test, 'TestNumber');
  if (number !== undefined) out.TestNumber = number;
  out.FailureReasons = failures;
  out.Advisories = advisories;
  return out;
}

/**
 * The UKMOT answer from r2's MotHistoryDetails block: tests newest first, `TestPassed` as
 * Pass/Fail, annotations split by type into failure reasons and advisories as the DVSA mapper
 * splits defects. r2's MOT package has no tax data, so `taxDate` is absent. Table:
 * docs/providers.md "UK Vehicle Data".
 */
export function ukvdMotDocument(results: JsonObject, vrm: string): MotDocument {
  const mot = block(results, 'MotHistoryDetails') ?? {};
  const tests = [...objectArrayField(mot, 'MotTestDetailsList')].sort((a, b) => sortTime(stringField(b, 'TestDate')) - sortTime(stringField(a, 'TestDate')));
  const newest = tests[0];
  const lastPass = tests.find((t) => booleanField(t, 'TestPassed') === true && stringField(t, 'ExpiryDate') !== undefined);
  const expiry = (lastPass && stringField(lastPass, 'ExpiryDate')) ?? stringField(mot, 'MotDueDate');
  const firstUsed = stringField(mot, 'FirstUsedDate');
  const unit = newest ? stringField(newest, 'OdometerUnit')?.toLowerCase() : undefined;
  const extended: Record<string, string | undefined> = {
    Make: stringField(mot, 'Make'),
    Model: stringField(mot, 'Model'),
    Colour: stringField(mot, 'Colour'),
    FuelType: stringField(mot, 'FuelType'),
    FirstUsedDate: firstUsed !== undefined ? dottedDate(isoish(firstUsed)) : undefined,
    MotStatus: stringField(mot, 'MotStatus'),
    MotExpiryDate: expiry !== undefined ? dottedDate(isoish(expiry)) : undefined,
    Registration: vrm,
    OdometerUnit: unit === 'mi' || unit === 'km' ? unit : undefined,
  };
  return {
    Tests: tests.map(motTest),
    ExtendedInformation: Object.fromEntries(Object.entries(extended).filter((e): e is [string, string] => e[1] !== undefined)),
  };
}
