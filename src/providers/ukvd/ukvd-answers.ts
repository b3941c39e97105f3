import { answerOf, askedOf, type AnsweredRecord, type CachedAnswerReader } from '../../datasets/export/answer-lines.js';
import { asObject } from '../upstream/json-reader.js';
import { UKVD_MOT_PACKAGE, type UkvdPayload } from './ukvd.client.js';
import { ukvdMotDocument, ukvdVehicleJson } from './ukvd.mapper.js';

/** The operations one answer of the vehicle package (UKVD_PACKAGE) serves: the providers map it alike for each. */
export const UKVD_VEHICLE_OPERATIONS: readonly string[] = ['Check', 'CheckMotorBikeUK', 'CheckUKMinimal'];

/** The operation the MotHistoryDetails package serves. */
export const UKVD_MOT_OPERATIONS: readonly string[] = ['UKMOT'];

/** A cached payload of this source (anything else read back from a shared cache is not an answer). */
export function isUkvdPayload(value: unknown): value is UkvdPayload {
  const v = asObject(value);
  return v !== undefined && typeof v.package === 'string' && asObject(v.results) !== undefined;
}

/**
 * UK Vehicle Data caches r2's Results per package and plate (`{package}|{VRM}`, UkvdClient.lookup):
 * MotHistoryDetails answers UKMOT, any other package (the vehicle package) the three UK vehicle
 * operations, mapped as the providers map them (ukvd.mapper.ts).
 */
export const ukvdAnswers: CachedAnswerReader = (cacheKey, payload, operation): AnsweredRecord[] => {
  if (!isUkvdPayload(payload)) return [];
  const vrm = cacheKey.slice(cacheKey.lastIndexOf('|') + 1);
  if (vrm === '') return [];
  if (payload.package === UKVD_MOT_PACKAGE) return askedOf(UKVD_MOT_OPERATIONS, operation).flatMap((op) => answerOf(op, [vrm], ukvdMotDocument(payload.results, vrm)));
  return askedOf(UKVD_VEHICLE_OPERATIONS, operation).flatMap((op) => answerOf(op, [vrm], ukvdVehicleJson(payload.results)));
};
