import type { VehicleDocument } from '../../results/result-documents.js';
import { ukDescription } from '../dvla/uk-vehicle.mapper.js';
import { titleCase } from '../dvla/uk-text.js';
import { asObject, stringField, withoutUndefined, type JsonObject } from '../upstream/json-reader.js';
import type { CarsxeCountry } from './carsxe-countries.js';

const wrapped = (value: string): { CurrentTextValue: string } => ({ CurrentTextValue: value });
const wrap = (value: string | undefined): { CurrentTextValue: string } | undefined => (value !== undefined ? wrapped(value) : undefined);
const join = (...parts: Array<string | undefined>): string | undefined => {
  const text = parts.filter((p) => p !== undefined).join(' ');
  return text === '' ? undefined : text;
};

/** "998" from "998", "998cc" or "998 cc": the cc the UK Description writes ("998CC"); else undefined. */
function ccOf(engine: string | undefined): string | undefined {
  const m = engine === undefined ? null : /^(\d{2,5})\s*(cc)?$/i.exec(engine);
  return m?.[1];
}

/**
 * A `Check<Country>` vehicleJson from CarsXE's v2 plate decoder (commercial-upstreams.md §1.3,
 * §1.7): flat snake-case strings, "" for what it does not know, mapped back into the original's
 * members for that country (Description style, wrapped members, the VIN's member name).
 * Table: docs/providers.md "CarsXE".
 */
export function carsxePlateVehicleJson(body: JsonObject, shape: CarsxeCountry): VehicleDocument {
  const s = (name: string): string | undefined => stringField(body, name);
  const make = s('make');
  const model = s('model');
  const year = s('registration_year') ?? s('year');
  const engine = s('engine_size') ?? s('engine');
  const fuel = s('fuel_type');
  const trim = s('trim');
  const description =
    shape.description === 'year-make-model' ? join(year, make, model) : shape.description === 'uk' ? ukDescription(year, make, model, ccOf(engine), fuel) : s('description') ?? join(make, model);
  const makeDescription = s('make_description') ?? make;
  const modelDescription = s('model_description') ?? join(model, trim);
  const describe = (text: string | undefined): string | { CurrentTextValue: string } | undefined => (shape.plainDescriptions === true ? text : wrap(text));
  return withoutUndefined<VehicleDocument>({
    Description: description,
    RegistrationYear: year,
    CarMake: wrap(make),
    CarModel: wrap(model),
    MakeDescription: describe(makeDescription),
    ModelDescription: describe(shape.plainDescriptions === true ? model : modelDescription),
    BodyStyle: wrap(s('body_style') ?? s('style')),
    EngineSize: wrap(shape.description === 'uk' ? (ccOf(engine) ?? engine) : engine),
    // The UK answers title-case the fuel ("Petrol"); elsewhere the upstream's case is kept (§6).
    FuelType: wrap(shape.description === 'uk' && fuel !== undefined ? titleCase(fuel) : fuel),
    Transmission: wrap(s('transmission')),
    DriveType: wrap(s('drive_type')),
    Colour: s('color'),
    [shape.vinKey]: s('vin'),
    AssemblyPlant: s('assembly'),
  });
}

/**
 * The VinCheck vehicleJson from CarsXE's `/specs` (§1.4, §1.7), in the offline decoder's VinCheck
 * shape: Description "{year} {Make} {Model}", the trim in ModelDescription, the VIN under the
 * original's misspelt key. `colors[]` lists a model's paint options, not this car's colour: unused.
 */
export function carsxeSpecsVehicleJson(body: JsonObject, vin: string): VehicleDocument {
  const a = asObject(body.attributes) ?? {};
  const s = (name: string): string | undefined => stringField(a, name);
  const make = s('make');
  const model = s('model');
  const year = s('year');
  return withoutUndefined<VehicleDocument>({
    Description: join(year, make, model),
    RegistrationYear: year,
    CarMake: wrap(make),
    CarModel: wrap(model),
    MakeDescription: wrap(make),
    ModelDescription: wrap(join(model, s('trim'))),
    BodyStyle: wrap(s('type') ?? s('style')),
    EngineSize: wrap(s('engine')),
    FuelType: wrap(s('fuel_type')),
    Transmission: wrap(s('transmission')),
    NumberOfDoors: wrap(s('doors')),
    DriveType: wrap(s('drivetrain')),
    VechileIdentificationNumber: vin,
    PlantCountry: s('made_in'),
  });
}
