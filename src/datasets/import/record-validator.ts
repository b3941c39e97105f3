import { Catalogue, joinKey } from '../../catalogue/catalogue.js';
import { textRule } from '../../catalogue/input-rules.js';
import { RESULT_CODECS } from '../../results/index.js';
import type { StoredRating, StoredRecord } from '../record.repository.js';

/** A valid import line, ready to store. */
export type ValidatedLine = (
  | { readonly kind: 'record'; readonly operation: string; readonly record: Omit<StoredRecord, 'source'> }
  | { readonly kind: 'rating'; readonly operation: string; readonly rating: Omit<StoredRating, 'source'> }
) & {
  /** The line's own `source`, which the file's (`--source`) gives way to (a recorded or exported line says `regcheck`). */
  readonly source?: string;
};

/** A source name: 1 to 64 letters, digits, `.`, `_`, `-` (as `--source` and the upload's `source`). */
const SOURCE_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** An ISO 8601 date-time with a zone, as a recorded line's `fetchedAt` (`2026-11-27T13:05:09.120Z`). */
const FETCHED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export type LineOutcome = { ok: true; line: ValidatedLine } | { ok: false; reason: string };

/** Every PreAssessmentSearchResult field by value type (the rating file importer reads it here). */
export { NCAP_FIELDS } from '../../results/pre-assessment-search-results.codec.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const fail = (reason: string): LineOutcome => ({ ok: false, reason });

/** Whether an import payload has the JSON type its codec takes (ImportPayload.jsonType). */
function hasJsonType(payload: unknown, type: 'object' | 'array' | 'string'): boolean {
  if (type === 'array') return Array.isArray(payload);
  if (type === 'string') return typeof payload === 'string';
  return isObject(payload);
}

/** Checks one parsed import line against the catalogue (issue 2 "Import format"). */
export class RecordValidator {
  constructor(private readonly catalogue: Catalogue) {}

  validate(value: unknown): LineOutcome {
    if (!isObject(value)) return fail('a line must be a JSON object');
    const name = value.operation;
    if (typeof name !== 'string') return fail('"operation" must be a string');
    const op = this.catalogue.find(name);
    if (!op) return fail(`unknown operation "${name}"`);
    const kind = op.dataset.kind;
    // The result type's codec names the payload member and checks it (src/results/).
    const codec = RESULT_CODECS[op.resultType];
    const payloadField = codec.importPayload.field;
    const allowed = new Set(['operation', payloadField, ...(kind === 'ncap' ? [] : ['key']), 'source', 'fetchedAt']);
    const extra = Object.keys(value).filter((k) => !allowed.has(k));
    if (extra.length > 0) return fail(`unexpected field${extra.length > 1 ? 's' : ''} ${extra.map((k) => `"${k}"`).join(', ')} for ${name} (expected ${[...allowed].map((k) => `"${k}"`).join(', ')})`);
    if (value.source !== undefined && (typeof value.source !== 'string' || !SOURCE_NAME.test(value.source))) return fail('"source" must be 1 to 64 letters, digits, ".", "_" or "-"');
    if (value.fetchedAt !== undefined && (typeof value.fetchedAt !== 'string' || !FETCHED_AT.test(value.fetchedAt) || Number.isNaN(Date.parse(value.fetchedAt)))) {
      return fail('"fetchedAt" must be an ISO 8601 date-time with a zone such as 2026-11-27T13:05:09Z');
    }
    const source = typeof value.source === 'string' ? { source: value.source } : {};
    const payload = value[payloadField];
    const jsonType = codec.importPayload.jsonType ?? 'object';
    if (!hasJsonType(payload, jsonType)) return fail(`"${payloadField}" must be a JSON ${jsonType}`);

    // Ratings are stored by their own fields; every other record by its key.
    const key = kind === 'ncap' ? '' : this.key(op.name, value.key);
    if (typeof key !== 'string') return key;
    const problem = codec.importPayload.validate(payload);
    if (problem !== undefined) return fail(problem);
    if (kind === 'ncap') return this.rating(name, payload as Record<string, unknown>, source);
    return { ok: true, line: { kind: 'record', operation: name, record: { dataset: op.dataset.name, lookupKey: key, document: JSON.stringify(payload) }, ...source } };
  }

  private key(operation: string, raw: unknown): string | LineOutcome {
    const op = this.catalogue.find(operation);
    if (!op) return fail(`unknown operation "${operation}"`);
    if (!isObject(raw)) return fail('"key" must be a JSON object');
    const params = Catalogue.keyParameters(op);
    const names = new Set(params.map((p) => p.name));
    const unknown = Object.keys(raw).filter((k) => !names.has(k));
    if (unknown.length > 0) return fail(`key field "${unknown[0] ?? ''}" is not part of the ${operation} key (expected ${params.map((p) => p.name).join(', ')})`);
    const values: string[] = [];
    for (const p of params) {
      const v = raw[p.name];
      const text = typeof v === 'number' ? String(v) : v;
      if (typeof text !== 'string') return fail(`key.${p.name} is required and must be a string`);
      const outcome = p.rule?.normalise(text) ?? { ok: true as const, value: text.trim() };
      if (!outcome.ok) return fail(`key.${p.name} ${outcome.reason}`);
      values.push(outcome.value);
    }
    return joinKey(values);
  }

  /** A rating line its codec accepted: stored by Id, else by make, model and year. */
  private rating(operation: string, ncap: Record<string, unknown>, source: { source?: string }): LineOutcome {
    const make = textRule.normalise(ncap.Make as string);
    const model = textRule.normalise(ncap.Model as string);
    if (!make.ok) return fail(`ncap.Make ${make.reason}`);
    if (!model.ok) return fail(`ncap.Model ${model.reason}`);
    const ratingKey = Number.isInteger(ncap.Id) ? `id:${String(ncap.Id)}` : `${make.value}|${model.value}|${typeof ncap.Year === 'number' ? ncap.Year : ''}`;
    return {
      ok: true,
      line: { kind: 'rating', operation, rating: { ratingKey, makeNorm: make.value, modelNorm: model.value, document: JSON.stringify(ncap) }, ...source },
    };
  }
}
