import type { VinDecode } from '../vin-offline/vin-decoding.js';
import { asObject, numberField, stringField, type JsonObject } from '../upstream/json-reader.js';
import type { NhtsaClient } from './nhtsa.client.js';

/** Adds what an online source knows to a thin offline decode. */
export interface VinEnricher {
  /**
   * The decode with the online source's data filled in, or `final: false` when the source could
   * not answer (the thin decode is served, but not remembered, so a later lookup asks again).
   */
  enrich(decode: VinDecode): Promise<{ readonly decode: VinDecode; readonly final: boolean }>;
}

/** vPIC writes "" for unknown values and sometimes "Not Applicable" (§4a, §9.1). */
function value(result: JsonObject, name: string): string | undefined {
  const v = stringField(result, name);
  return v === undefined || v === 'Not Applicable' ? undefined : v;
}

/** Vehicle names in vPIC are upper case ("F-150", "GOLF"); the offline decoder's are title case. */
function titleCase(text: string): string {
  return text.toLowerCase().replace(/(^|[\s-])(\p{L})/gu, (_m, sep: string, letter: string) => `${sep}${letter.toUpperCase()}`);
}

/**
 * NHTSA vPIC online, asked only when the offline decode found the manufacturer but no model
 * (docs/vin-decoding.md: many European VINs). Offline values are kept; vPIC fills the gaps.
 */
export class NhtsaVinEnricher implements VinEnricher {
  constructor(private readonly client: NhtsaClient) {}

  async enrich(decode: VinDecode): Promise<{ readonly decode: VinDecode; readonly final: boolean }> {
    if (decode.level === 'model') return { decode, final: true };
    const answer = await this.client.vinValues(decode.vin);
    if (answer.status === 'unavailable') return { decode, final: false };
    const result = answer.status === 'found' ? asObject(answer.payload) : undefined;
    const model = result ? value(result, 'Model') : undefined;
    if (!result || model === undefined) return { decode, final: true };
    const year = numberField(result, 'ModelYear');
    return {
      final: true,
      decode: {
        ...decode,
        level: 'model',
        model: titleCase(model),
        trim: decode.trim ?? value(result, 'Trim'),
        modelYear: decode.modelYear ?? (year !== undefined && year > 1900 ? year : undefined),
        bodyClass: decode.bodyClass ?? value(result, 'BodyClass'),
        doors: decode.doors ?? value(result, 'Doors'),
        fuelPrimary: decode.fuelPrimary ?? value(result, 'FuelTypePrimary'),
        transmissionStyle: decode.transmissionStyle ?? value(result, 'TransmissionStyle'),
        driveType: decode.driveType ?? value(result, 'DriveType'),
        engine: {
          ...decode.engine,
          displacementLitres: decode.engine.displacementLitres ?? value(result, 'DisplacementL'),
          cylinders: decode.engine.cylinders ?? value(result, 'EngineCylinders'),
        },
      },
    };
  }
}
