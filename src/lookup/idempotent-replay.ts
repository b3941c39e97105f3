import type { IdempotencyRepository } from '../credits/idempotency.repository.js';
import { cutoffOf } from '../credits/debit-writer.js';
import type { Clock } from '../shared/clock.js';
import { andThen, type MaybePromise } from '../shared/maybe-promise.js';
import { LookupError } from './lookup-error.js';
import type { LookupResult } from '../results/result-documents.js';

/**
 * What an Idempotency-Key may be: 1 to 255 characters of letters, digits and `. _ : ~ + / = -`
 * (a UUID, a ULID, base64 of random bytes all fit; payment APIs take keys up to 255 characters).
 * Spaces, commas and quotes are refused: a key sent twice in one request reaches us joined by a
 * comma, and such a key is a client bug, not a key.
 */
export const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:~+/=-]{1,255}$/;

/** The key the client sent, checked; undefined when it sent none; INVALID_INPUT when it is malformed. */
export function checkIdempotencyKey(raw: string | readonly string[] | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && IDEMPOTENCY_KEY.test(raw)) return raw;
  throw new LookupError(
    'INVALID_INPUT',
    'Idempotency-Key must be 1 to 255 characters of letters, digits and . _ : ~ + / = - (send one key per request)',
  );
}

/** A stored answer to repeat, with what it was charged the first time. */
export interface Replay {
  readonly result: LookupResult;
  readonly charged: number;
}

/** The refusal of a key the account already used for another query (nothing is charged). */
export function keyReused(key: string, operation: string, query: string): LookupError {
  const shown = key.length > 64 ? `${key.slice(0, 64)}...` : key;
  return new LookupError(
    'IDEMPOTENCY_CONFLICT',
    `Idempotency-Key ${shown} was already used for ${operation} ${query.replaceAll('|', ' ')}; use a new key for a different lookup`,
  );
}

/**
 * The answers of charged lookups by the account's Idempotency-Key, for the pipeline's replay stage
 * (issue 17 item 3): a repeat of the same query within the retention is answered from the stored
 * result without a debit; the same key with another query is refused.
 */
export class IdempotentReplays {
  constructor(
    private readonly repository: IdempotencyRepository,
    private readonly clock: Clock,
    /** IDEMPOTENCY_RETENTION_HOURS in milliseconds. */
    readonly retentionMs: number,
  ) {}

  /**
   * The stored answer of `key` when it was used for this operation and query; undefined when the
   * account has no live record under it; IDEMPOTENCY_CONFLICT when it was used for another query.
   */
  find(accountId: number, key: string, operation: string, query: string): MaybePromise<Replay | undefined> {
    // At once on SQLite (IdempotencyRepository.find): a key's first lookup pays no promise for it.
    return andThen(this.repository.find(accountId, key, cutoffOf(this.nowIso(), this.retentionMs)), (record) => {
      if (!record) return undefined;
      if (record.operation !== operation || record.query !== query) throw keyReused(key, record.operation, record.query);
      return { result: JSON.parse(record.result) as LookupResult, charged: record.charged };
    });
  }

  /** The clock's time as ISO 8601, formatted once per millisecond (as LookupCharging's debit time). */
  private nowIso(): string {
    const clock = this.clock;
    const ms = clock.millis ? clock.millis() : clock.now().getTime();
    if (ms !== this.lastIso.ms) this.lastIso = { ms, iso: new Date(ms).toISOString() };
    return this.lastIso.iso;
  }

  private lastIso = { ms: Number.NaN, iso: '' };
}
