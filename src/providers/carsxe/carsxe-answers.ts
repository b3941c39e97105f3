import { answerOf, askedOf, type AnsweredRecord, type CachedAnswerReader } from '../../datasets/export/answer-lines.js';
import { asObject } from '../upstream/json-reader.js';
import { CARSXE_PLATE_OPERATIONS } from './carsxe-countries.js';
import type { CarsxeEndpoint, CarsxePayload } from './carsxe.client.js';
import { carsxePlateVehicleJson, carsxeSpecsVehicleJson } from './carsxe.mapper.js';

/** The operation `/specs` answers. */
export const CARSXE_VIN_OPERATIONS: readonly string[] = ['VinCheck'];

/** A cached payload of `endpoint` (anything else read back from a shared cache is not an answer). */
export function isCarsxePayload(value: unknown, endpoint: CarsxeEndpoint): value is CarsxePayload {
  const v = asObject(value);
  return v !== undefined && v.endpoint === endpoint && asObject(v.body) !== undefined;
}

/** Decodes one `|`-separated part of a cache key; undefined when it is not well formed. */
function part(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * CarsXE caches its plate decoder's body per `plate|{country}|{state or district}|{plate}` and
 * `/specs` per `specs|{VIN}` (CarsxeClient): a plate answer serves every `Check<Country>` of
 * CARSXE_PLATE_OPERATIONS with that country, a specs answer VinCheck, mapped as the providers map
 * them. Pakistan's answer is keyed by district alone while CheckPakistan's key also holds the
 * province, so it cannot be written as an import line and answers nothing here.
 */
export const carsxeAnswers: CachedAnswerReader = (cacheKey, payload, operation): AnsweredRecord[] => {
  if (isCarsxePayload(payload, 'specs') && cacheKey.startsWith('specs|')) {
    const vin = cacheKey.slice('specs|'.length);
    return askedOf(CARSXE_VIN_OPERATIONS, operation).flatMap((op) => answerOf(op, [vin], carsxeSpecsVehicleJson(payload.body, vin)));
  }
  if (!isCarsxePayload(payload, 'plate')) return [];
  const [kind, country, region, plate, ...rest] = cacheKey.split('|');
  const [c, r, p] = [part(country), part(region), part(plate)];
  if (kind !== 'plate' || rest.length > 0 || c === undefined || r === undefined || p === undefined || p === '') return [];
  const served = Object.entries(CARSXE_PLATE_OPERATIONS).filter(([, shape]) => shape.country === c && shape.region !== 'district');
  return served
    .filter(([name]) => askedOf([name], operation).length > 0)
    .flatMap(([name, shape]) => answerOf(name, shape.region === 'state' ? [p, r] : [p], carsxePlateVehicleJson(payload.body, shape)));
};
