import { asObject, numberField, objectArrayField, stringField, textField, withoutUndefined, type JsonObject } from '../upstream/json-reader.js';

/** The CheckNorway vehicleJson, in the shape of the sample dataset's Norway records. */
export interface NorwayVehicleJson {
  readonly Description: string;
  /** A number for Norway, unlike most countries (compat-notes.md). */
  readonly RegistrationYear?: number;
  readonly CarMake: { readonly CurrentTextValue: string };
  readonly CarModel?: { readonly CurrentTextValue: string };
  readonly MakeDescription: string;
  readonly ModelDescription?: string;
  readonly EngineSize?: { readonly CurrentTextValue: string };
  readonly FuelType?: { readonly CurrentTextValue: string };
  /** Spelt as the public API spells it. */
  readonly VechileIdentificationNumber?: string;
  readonly Colour?: string;
  readonly NumberOfSeats?: { readonly CurrentTextValue: number };
}

/** An object reached through a path of object members, or undefined. */
function at(object: JsonObject | undefined, ...path: string[]): JsonObject | undefined {
  let current = object;
  for (const name of path) current = current ? asObject(current[name]) : undefined;
  return current;
}

/** The first object of an array member. */
const first = (object: JsonObject | undefined, name: string): JsonObject | undefined => (object ? objectArrayField(object, name)[0] : undefined);

/** The first string of an array of strings (`handelsbetegnelse: ["GOLF"]`). */
function firstString(object: JsonObject | undefined, name: string): string | undefined {
  const value = object?.[name];
  const item: unknown = Array.isArray(value) ? (value as unknown[])[0] : undefined;
  return typeof item === 'string' && item.trim() !== '' ? item.trim() : undefined;
}

/** Electric fuel (`drivstoffKode` 5, "Elektrisk"): no cylinder capacity, which Norway records show as "0". */
const isElectric = (fuel: JsonObject | undefined): boolean => {
  const code = asObject(fuel?.drivstoffKode);
  return code !== undefined && (textField(code, 'kodeVerdi') === '5' || stringField(code, 'kodeNavn')?.toLowerCase() === 'elektrisk');
};

/**
 * Maps one `kjoretoydataListe` record (upstream-sources.md §5) to CheckNorway's vehicleJson. The
 * engine is read from `motorOgDrivverk` and from the newer `motorOgYtelse`, since the schema
 * changed between versions (§5). Returns undefined when the record has no make.
 */
export function norwayVehicleJson(record: JsonObject): NorwayVehicleJson | undefined {
  const technical = at(record, 'godkjenning', 'tekniskGodkjenning', 'tekniskeData');
  const general = at(technical, 'generelt');
  const make = stringField(first(general, 'merke') ?? {}, 'merke');
  if (make === undefined) return undefined;
  const model = firstString(general, 'handelsbetegnelse');
  const engineGroup = at(technical, 'motorOgDrivverk') ?? at(technical, 'motorOgYtelse');
  const motor = first(engineGroup, 'motor');
  const fuel = first(motor, 'drivstoff');
  const cc = motor ? numberField(motor, 'slagvolum') : undefined;
  const fuelName = stringField(asObject(fuel?.drivstoffKode) ?? {}, 'kodeNavn');
  const firstRegistered = stringField(at(record, 'forstegangsregistrering') ?? {}, 'registrertForstegangNorgeDato');
  const year = firstRegistered !== undefined && /^\d{4}-/.test(firstRegistered) ? Number(firstRegistered.slice(0, 4)) : undefined;
  const colour = stringField(first(at(technical, 'karosseriOgLasteplan'), 'rFarge') ?? {}, 'kodeNavn');
  const seats = numberField(at(technical, 'persontall') ?? {}, 'sitteplasserTotalt');
  const vin = stringField(at(record, 'kjoretoyId') ?? {}, 'understellsnummer');
  const engineSize = cc !== undefined ? String(Math.round(cc)) : isElectric(fuel) ? '0' : undefined;
  return withoutUndefined<NorwayVehicleJson>({
    Description: model === undefined ? make : `${make} ${model}`,
    RegistrationYear: year,
    CarMake: { CurrentTextValue: make },
    CarModel: model === undefined ? undefined : { CurrentTextValue: model },
    MakeDescription: make,
    ModelDescription: model,
    EngineSize: engineSize === undefined ? undefined : { CurrentTextValue: engineSize },
    FuelType: fuelName === undefined ? undefined : { CurrentTextValue: fuelName },
    VechileIdentificationNumber: vin,
    Colour: colour,
    NumberOfSeats: seats === undefined ? undefined : { CurrentTextValue: seats },
  });
}
