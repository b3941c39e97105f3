import type { FlatRecord } from '../../results/flat-record.js';
import type { VehicleDocument } from '../../results/result-documents.js';
import { withoutUndefined, stringField, type JsonObject } from '../upstream/json-reader.js';

/** `{"CurrentTextValue": ...}`, as the VinCheck answers wrap make, model, engine, fuel and body. */
const wrapped = (value: string): { CurrentTextValue: string } => ({ CurrentTextValue: value });

/**
 * Vincario's decode list indexed by label (§3.2). A value is a string, a number or an array (the
 * same label changes type between vehicles); numbers become text, arrays their first element.
 */
function labels(decode: readonly JsonObject[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of decode) {
    const label = stringField(item, 'label');
    let value: unknown = item.value;
    if (Array.isArray(value)) value = (value as unknown[])[0];
    const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : typeof value === 'string' ? value.trim() : undefined;
    if (label !== undefined && text !== undefined && text !== '' && !out.has(label)) out.set(label, text);
  }
  return out;
}

/**
 * The VinCheck vehicleJson from a Vincario decode (commercial-upstreams.md §3.5), in the shape of
 * the offline decoder's VinCheck answers (vin-vehicle.ts): Description "{year} {Make} {Model}",
 * wrapped make, model, body, engine and fuel, the VIN under the original's misspelt key. Vincario
 * has no colour, and its Make Logo is a brand logo, not a picture of the car: neither is used.
 * Table: docs/providers.md "Vincario".
 */
export function vincarioVehicleJson(decode: readonly JsonObject[], vin: string): VehicleDocument {
  const v = labels(decode);
  const make = v.get('Make');
  const model = v.get('Model');
  const year = v.get('Model Year');
  const description = [year, make, model].filter((p) => p !== undefined).join(' ');
  const engine = v.get('Engine Displacement (ccm)');
  const fuel = v.get('Fuel Type - Primary');
  const body = v.get('Body');
  const transmission = v.get('Transmission');
  const doors = v.get('Number of Doors');
  const drive = v.get('Drive');
  return withoutUndefined<VehicleDocument>({
    Description: description === '' ? undefined : description,
    RegistrationYear: year,
    CarMake: make !== undefined ? wrapped(make) : undefined,
    CarModel: model !== undefined ? wrapped(model) : undefined,
    MakeDescription: make !== undefined ? wrapped(make) : undefined,
    ModelDescription: model !== undefined ? wrapped(model) : undefined,
    BodyStyle: body !== undefined ? wrapped(body) : undefined,
    EngineSize: engine !== undefined ? wrapped(engine) : undefined,
    FuelType: fuel !== undefined ? wrapped(fuel) : undefined,
    Transmission: transmission !== undefined ? wrapped(transmission) : undefined,
    NumberOfDoors: doors !== undefined ? wrapped(doors) : undefined,
    DriveType: drive !== undefined ? wrapped(drive) : undefined,
    VechileIdentificationNumber: v.get('VIN') ?? vin,
    ManufacturerName: v.get('Manufacturer'),
    PlantCity: v.get('Plant City'),
    PlantCountry: v.get('Plant Country'),
  });
}

/** The registers of Vincario's stolen check by code (VN-OAS): police databases and Vincario's own. */
const REGISTERS: Readonly<Record<string, string>> = {
  cz: 'Czech Republic',
  hu: 'Hungary',
  ro: 'Romania',
  si: 'Slovenia',
  sk: 'Slovakia',
  it: 'Italy',
  // Named by what it is: the caller never learns which source answered (issue 32).
  vincario: 'International database',
};

const STATUS_TEXT: Readonly<Record<string, string>> = { stolen: 'Reported stolen', 'not-stolen': 'Not reported stolen', 'could-not-verify': 'Could not be verified' };

/**
 * CheckStolen's name/value pairs from a Vincario stolen check: the empty list (free, "not
 * reported stolen", as the original answers) when no register reports the VIN, else the report:
 * `Status: Reported stolen` first, as the original's theft reports begin (samples/sample-dataset.jsonl),
 * then one pair per register asked, its country and what it said.
 */
export function stolenNameValues(stolen: readonly JsonObject[]): FlatRecord[] {
  const registers = stolen.flatMap((r) => {
    const code = stringField(r, 'code')?.toLowerCase();
    const status = stringField(r, 'status')?.toLowerCase();
    return code !== undefined && status !== undefined ? [{ code, status }] : [];
  });
  if (!registers.some((r) => r.status === 'stolen')) return [];
  return [
    { Name: 'Status', Value: 'Reported stolen' },
    ...registers.map((r) => ({ Name: REGISTERS[r.code] ?? r.code.toUpperCase(), Value: STATUS_TEXT[r.status] ?? r.status })),
  ];
}
