import { answerOf, askedOf, type AnsweredRecord, type CachedAnswerReader } from '../../datasets/export/answer-lines.js';
import { asObject } from '../upstream/json-reader.js';
import type { VincarioPayload, VincarioService } from './vincario.client.js';
import { stolenNameValues, vincarioVehicleJson } from './vincario.mapper.js';

/** The operation each Vincario action answers. */
export const VINCARIO_OPERATIONS: Readonly<Record<VincarioService, readonly string[]>> = { decode: ['VinCheck'], 'stolen-check': ['CheckStolen'] };

/** A cached payload of `service` (anything else read back from a shared cache is not an answer). */
export function isVincarioPayload(value: unknown, service: VincarioService): value is VincarioPayload {
  const v = asObject(value);
  return v !== undefined && v.service === service && Array.isArray(service === 'decode' ? v.decode : v.stolen);
}

/**
 * Vincario caches each action's list per VIN (`{action}|{VIN}`, VincarioClient.lookup): a decode
 * answers VinCheck, a stolen check CheckStolen, mapped as the providers map them.
 */
export const vincarioAnswers: CachedAnswerReader = (cacheKey, payload, operation): AnsweredRecord[] => {
  const vin = cacheKey.slice(cacheKey.indexOf('|') + 1);
  if (vin === '' || !cacheKey.includes('|')) return [];
  if (isVincarioPayload(payload, 'decode') && payload.service === 'decode') {
    return askedOf(VINCARIO_OPERATIONS.decode, operation).flatMap((op) => answerOf(op, [vin], vincarioVehicleJson(payload.decode, vin)));
  }
  if (isVincarioPayload(payload, 'stolen-check') && payload.service === 'stolen-check') {
    return askedOf(VINCARIO_OPERATIONS['stolen-check'], operation).flatMap((op) => answerOf(op, [vin], stolenNameValues(payload.stolen)));
  }
  return [];
};
