import type { KeySpend } from '../alerts/key-cap-alerts.js';
import type { Storage } from '../storage/create-database.js';
import type { Tx } from '../storage/database.js';
import type { CreditLedgerRepository, DebitDetails, FreeLookupRow, ReversalDetails } from './credit-ledger.repository.js';
import type { AnswerBatch, IdempotencyRepository } from './idempotency.repository.js';
import { andThen, type MaybePromise } from '../shared/maybe-promise.js';

export interface DebitRequest {
  readonly accountId: number;
  readonly cost: number;
  readonly details: DebitDetails;
}

/**
 * A debit that was not made because its account already holds a live record under its
 * Idempotency-Key (written by an earlier lookup, or by an earlier debit of the same batch): the
 * caller answers from that record instead.
 */
export const KEY_TAKEN = Symbol('idempotency key taken');

/**
 * A debit that was not made because its API key's credit cap would be passed in the cap's period
 * (issue 33): nothing was debited and the key's spend is unchanged.
 */
export const KEY_CAP_REACHED = Symbol('key cap reached');

/** A debit's outcome: the balance after it, undefined when the balance did not cover it, KEY_TAKEN or KEY_CAP_REACHED. */
export type DebitResult = number | undefined | typeof KEY_TAKEN | typeof KEY_CAP_REACHED;


/** Idempotency records and how long they count (IDEMPOTENCY_RETENTION_HOURS). */
export interface IdempotencyOptions {
  readonly repository: IdempotencyRepository;
  readonly retentionMs: number;
}

/** No free rows (the default: a batch of debits only allocates nothing for them). */
const NO_FREE_ROWS: readonly FreeLookupRow[] = [];

/**
 * A batch's COMMIT whose answer is lost with the connection (a database restart) is settled by
 * asking the server, never retried and never reported as done while unknown (Storage.transaction,
 * issue 31): a retry could debit twice, and a lookup answered as failed must not stay charged.
 */
const KNOWN_OUTCOME = { knownOutcome: true } as const;

/** Expired idempotency records are purged by a keyed batch at most this often per process. */
const PURGE_INTERVAL_MS = 60_000;

/**
 * Writes a batch of debits in one transaction: accounts in ascending id (the lock order, so
 * batches on several instances cannot deadlock), each account's debits together and in arrival
 * order (CreditLedgerRepository.debitMany). A debit with an Idempotency-Key first claims its key
 * (in key order, before its account's row: the same lock order on every instance), in the same
 * transaction, so the record commits with the debit and its ledger row. Debits without a key cost
 * nothing more: no query is added for them.
 *
 * Free lookups' rows (kind `free`, CreditLedgerRepository.writeFreeRows) ride in the same
 * transaction, after every debit: one more statement per 32 of them, none when there are none.
 * They move no credits and lock no account row, so they change nothing for the debits beside them.
 */
export class DebitWriter {
  private lastPurgeMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly ledger: CreditLedgerRepository,
    private readonly idempotency?: IdempotencyOptions,
    /** Told after the COMMIT of each capped key's debit (key cap alerts); never awaited. */
    private readonly onKeySpend?: (spend: KeySpend) => void,
  ) {}

  /**
   * Each debit's outcome (DebitResult), with the free rows written too. All or nothing: if it
   * throws, no debit happened, no idempotency record and no free row was written; except
   * CommitOutcomeUnknown (store-unavailable.ts), when the database could not say within
   * DB_COMMIT_SETTLE_SECONDS whether the batch committed: its `settled` tells later.
   */
  write(batch: readonly DebitRequest[], free: readonly FreeLookupRow[] = NO_FREE_ROWS): Promise<DebitResult[]> {
    const byAccount = new Map<number, number[]>();
    let keyed = false;
    let capped = false;
    for (const [index, request] of batch.entries()) {
      if (request.details.idempotency) keyed = true;
      if (request.details.cap) capped = true;
      const indexes = byAccount.get(request.accountId);
      if (indexes) indexes.push(index);
      else byAccount.set(request.accountId, [index]);
    }
    const accounts = [...byAccount.keys()].sort((a, b) => a - b);
    // The common batch (debits without a key, no free rows) runs at once on SQLite: no promise
    // per statement (Tx.run), so the whole transaction costs one (test/cost/ counts them).
    if (!keyed && !capped && free.length === 0) {
      return this.storage.transaction((tx) => this.debitAccounts(tx, accounts, byAccount, batch, new Array<DebitResult>(batch.length), 0), KNOWN_OUTCOME);
    }
    // Keyed or capped batches and batches with free rows: on SQLite every statement but the rare
    // ones (the purge once a minute, a release, free rows) runs at once too, so a key's first
    // lookup costs its claim statement, not a promise per statement (it cost 42 promises more than
    // a plain lookup when this was an async function: test/cost/).
    const spends: KeySpend[] = [];
    const idempotency = keyed ? this.requireIdempotency() : undefined;
    const answers = idempotency?.repository.answerBatch(idempotency.retentionMs);
    const written = this.storage.transaction((tx) => {
      spends.length = 0;
      answers?.reset();
      const results = new Array<DebitResult>(batch.length);
      const purged = keyed ? this.purgeExpired(tx, batch) : undefined;
      const debited = andThen(purged, () =>
        inOrder(accounts, (accountId) => this.debitAccount(tx, accountId, byAccount.get(accountId) ?? [], batch, results, { answers, capped, spends })),
      );
      // After the debits: a free row of an account debited in this batch shows the balance after them.
      return andThen(debited, () => (free.length > 0 ? this.ledger.writeFreeRows(tx, free).then(() => results) : results));
    }, KNOWN_OUTCOME);
    const onKeySpend = capped ? this.onKeySpend : undefined;
    if (!answers && !onKeySpend) return written;
    return written.then((results) => {
      // Committed: the answers stored may now be shared by later records (AnswerBatch).
      answers?.committed();
      if (onKeySpend) for (const spend of spends) onKeySpend(spend);
      return results;
    });
  }

  /**
   * Gives back a committed debit whose answer could not be written (issue 31), in a transaction of
   * its own: the balance and the `reversal` row, and the release of the debit's Idempotency-Key
   * record when it had one, so a retry under that key is looked up and charged again rather than
   * replayed for free an answer nobody paid for. The record is released only if it is still this
   * debit's (same request id): one purged and claimed again by a later lookup stays. Returns the
   * new balance, or undefined when the account is gone. Rare (a client that went away during its
   * lookup), so it is not batched.
   */
  reverse(accountId: number, reversal: ReversalDetails, idempotencyKey?: string): Promise<number | undefined> {
    return this.storage.transaction(async (tx) => {
      if (idempotencyKey !== undefined) await this.requireIdempotency().repository.release(tx, accountId, idempotencyKey, reversal.requestId);
      return this.ledger.reverse(tx, accountId, reversal);
    });
  }

  /**
   * One account's debits of a keyed or capped batch (or one with free rows): its Idempotency-Keys
   * claimed first, then its keys' caps counted (countCaps), then debitMany. An unpaid debit keeps
   * no idempotency record and gives back what it counted of its key's cap, in the same transaction.
   */
  private debitAccount(
    tx: Tx,
    accountId: number,
    indexes: readonly number[],
    batch: readonly DebitRequest[],
    results: DebitResult[],
    batchKind: { readonly answers: AnswerBatch | undefined; readonly capped: boolean; readonly spends: KeySpend[] },
  ): MaybePromise<void> {
    const claimed = batchKind.answers ? this.claimKeys(tx, accountId, indexes, batch, results, batchKind.answers) : indexes;
    return andThen(claimed, (afterClaims) =>
      andThen(batchKind.capped ? this.countCaps(tx, accountId, afterClaims, batch, results) : undefined, (counted) => {
        const toDebit = counted ? counted.indexes : afterClaims;
        return andThen(
          this.ledger.debitMany(
            tx,
            accountId,
            toDebit.map((i) => batch[i] as DebitRequest),
          ),
          (after) => {
            const unpaidKeys: string[] = [];
            const uncounted: KeySpend[] = [];
            for (const [i, batchIndex] of toDebit.entries()) {
              const balance = after[i];
              results[batchIndex] = balance;
              const key = batch[batchIndex]?.details.idempotency?.key;
              // An unpaid lookup keeps no record: a retry once the account is topped up is charged.
              if (balance === undefined && key !== undefined) unpaidKeys.push(key);
              const spend = counted?.spends.get(batchIndex);
              if (spend === undefined) continue;
              // An unpaid lookup spent nothing of its key's cap either: given back in the same transaction.
              if (balance === undefined) uncounted.push(spend);
              else batchKind.spends.push(spend);
            }
            if (unpaidKeys.length === 0 && uncounted.length === 0) return undefined;
            return andThen(
              inOrder(unpaidKeys, (key) => this.requireIdempotency().repository.release(tx, accountId, key)),
              () => inOrder(uncounted, (spend) => this.ledger.uncountKeySpend(tx, spend.keyId, spend.periodKey, spend.cost)),
            );
          },
        );
      }),
    );
  }

  /**
   * Counts the capped debits of one account against their keys' caps, in key id order (the lock
   * order on every instance: a key's row is locked before its account's, and keys belong to one
   * account), each a conditional update in this transaction; those that would pass a cap are
   * answered KEY_CAP_REACHED and left out. Returns the indexes still to debit, in arrival order,
   * and each counted debit's spend (given back by the caller if the balance then does not cover it).
   */
  private async countCaps(
    tx: Tx,
    accountId: number,
    indexes: readonly number[],
    batch: readonly DebitRequest[],
    results: DebitResult[],
  ): Promise<{ indexes: number[]; spends: Map<number, KeySpend> }> {
    const spends = new Map<number, KeySpend>();
    const capped = indexes.filter((i) => batch[i]?.details.cap !== undefined);
    if (capped.length === 0) return { indexes: [...indexes], spends };
    const keyOf = (i: number): number => batch[i]?.details.cap?.keyId ?? 0;
    capped.sort((a, b) => keyOf(a) - keyOf(b) || a - b);
    const refused = new Set<number>();
    for (const i of capped) {
      const { details, cost } = batch[i] as DebitRequest;
      const cap = details.cap as NonNullable<DebitDetails['cap']>;
      const counted = await this.ledger.countKeySpend(tx, cap.keyId, cap.periodKey, cost);
      if (counted === undefined) {
        refused.add(i);
        results[i] = KEY_CAP_REACHED;
      } else if (counted.cap !== null) {
        spends.set(i, { accountId, keyId: cap.keyId, cost, spentAfter: counted.spent, cap: counted.cap, periodKey: cap.periodKey });
      }
    }
    return { indexes: indexes.filter((i) => !refused.has(i)), spends };
  }

  /** The debits of `accounts` from index `from` on, without keys: each account's in one debitMany. */
  private debitAccounts(
    tx: Tx,
    accounts: readonly number[],
    byAccount: ReadonlyMap<number, number[]>,
    batch: readonly DebitRequest[],
    results: DebitResult[],
    from: number,
  ): MaybePromise<DebitResult[]> {
    for (let a = from; a < accounts.length; a += 1) {
      const accountId = accounts[a] as number;
      const indexes = byAccount.get(accountId) ?? [];
      const after = this.ledger.debitMany(
        tx,
        accountId,
        indexes.map((i) => batch[i] as DebitRequest),
      );
      const record = (balances: ReadonlyArray<number | undefined>): void => {
        indexes.forEach((batchIndex, i) => {
          results[batchIndex] = balances[i];
        });
      };
      if (after instanceof Promise) {
        return after.then((balances) => {
          record(balances);
          return this.debitAccounts(tx, accounts, byAccount, batch, results, a + 1);
        });
      }
      record(after);
    }
    return results;
  }

  /**
   * Claims the keys of one account's keyed debits, in key order; those whose key is taken are
   * answered KEY_TAKEN and left out. Returns the indexes still to debit, in arrival order.
   */
  private claimKeys(
    tx: Tx,
    accountId: number,
    indexes: readonly number[],
    batch: readonly DebitRequest[],
    results: DebitResult[],
    answers: AnswerBatch,
  ): MaybePromise<readonly number[]> {
    const claims = indexes.filter((i) => batch[i]?.details.idempotency !== undefined);
    if (claims.length === 0) return indexes;
    const { repository, retentionMs } = this.requireIdempotency();
    const keyOf = (i: number): string => batch[i]?.details.idempotency?.key ?? '';
    claims.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : a - b));
    const taken = new Set<number>();
    const claimed = inOrder(claims, (i) => {
      const { details, cost } = batch[i] as DebitRequest;
      const idempotency = details.idempotency as NonNullable<DebitDetails['idempotency']>;
      const record = {
        key: idempotency.key,
        operation: details.operation,
        query: details.query,
        result: idempotency.result,
        answer: idempotency.answer,
        charged: cost,
        requestId: details.requestId,
        createdAt: details.createdAt,
      };
      return andThen(repository.claim(tx, accountId, record, cutoffOf(details.createdAt, retentionMs), answers), (ok) => {
        if (ok) return;
        taken.add(i);
        results[i] = KEY_TAKEN;
      });
    });
    return andThen(claimed, () => (taken.size === 0 ? indexes : indexes.filter((i) => !taken.has(i))));
  }

  /**
   * Purge on write: a batch that carries a key deletes the expired records, at most once a minute
   * per process, in its own transaction (indexed range deletes of about a minute's expiries: the
   * records, and the answers no live record can still refer to).
   */
  private purgeExpired(tx: Tx, batch: readonly DebitRequest[]): MaybePromise<void> {
    const latest = batch.reduce((max, r) => (r.details.createdAt > max ? r.details.createdAt : max), '');
    const nowMs = Date.parse(latest);
    if (!(nowMs - this.lastPurgeMs >= PURGE_INTERVAL_MS)) return undefined;
    const { repository, retentionMs } = this.requireIdempotency();
    // Answers are kept twice the retention (AnswerBatch): no live record refers to one older.
    return repository.purgeExpired(tx, cutoffOf(latest, retentionMs), cutoffOf(latest, 2 * retentionMs)).then(() => {
      this.lastPurgeMs = nowMs;
    });
  }

  private requireIdempotency(): IdempotencyOptions {
    if (!this.idempotency) throw new Error('a debit carries an Idempotency-Key but the debit writer has no idempotency repository');
    return this.idempotency;
  }
}

/** Runs `step` on each item in order: at once while every step returns a plain value (SQLite's Tx.run). */
function inOrder<T>(items: readonly T[], step: (item: T) => MaybePromise<void>, from = 0): MaybePromise<void> {
  for (let i = from; i < items.length; i += 1) {
    const done = step(items[i] as T);
    if (done instanceof Promise) return done.then(() => inOrder(items, step, i + 1));
  }
  return undefined;
}

/** The creation time (ISO text) at or before which a record has expired for a debit made at `createdAt`. */
export function cutoffOf(createdAt: string, retentionMs: number): string {
  // A keyed lookup asks twice (replay, claim) and lookups under load share a millisecond: the
  // last answer is kept (parsing and formatting the dates was 1% of bench:json's keyed profile).
  const last = lastCutoff;
  if (last.createdAt === createdAt && last.retentionMs === retentionMs) return last.cutoff;
  const cutoff = new Date(Date.parse(createdAt) - retentionMs).toISOString();
  lastCutoff = { createdAt, retentionMs, cutoff };
  return cutoff;
}

let lastCutoff = { createdAt: '', retentionMs: Number.NaN, cutoff: '' };
