import type { AnsweredRecord, CachedAnswerReader } from '../../datasets/export/answer-lines.js';
import type { RegcheckPayload } from './regcheck.client.js';

/** A cached payload of this source (anything else read back from a shared cache is ignored). */
export function isRegcheckPayload(value: unknown): value is RegcheckPayload {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { operation?: unknown; key?: unknown };
  return typeof v.operation === 'string' && typeof v.key === 'object' && v.key !== null && 'record' in v;
}

/**
 * The original caches what an import line carries (RegcheckPayload: the operation asked, its key,
 * the record its codec read), so its cached payload is its own answer as it stands.
 */
export const regcheckAnswers: CachedAnswerReader = (_cacheKey, payload, operation): AnsweredRecord[] => {
  if (!isRegcheckPayload(payload) || (operation !== undefined && payload.operation !== operation)) return [];
  return [{ operation: payload.operation, key: payload.key, record: payload.record }];
};
