import type { DebitDetails, FreeLookupDetails, FreeLookupRow, ReversalDetails } from './credit-ledger.repository.js';
import type { DebitResult, DebitWriter } from './debit-writer.js';
import { CommitOutcomeUnknown, type CommitStatus } from '../storage/store-unavailable.js';

/**
 * A batch whose COMMIT's answer was lost with the database connection and whose outcome the
 * database could not tell within DB_COMMIT_SETTLE_SECONDS: its lookups were answered
 * "temporarily unavailable". `outcome` is what the database said later (CommitOutcomeUnknown's
 * `settled`): `committed` means those debits stand without their answers, for an operator to
 * give back (services.ts reverses each with DebitWriter.reverse, as for an undelivered answer);
 * `aborted`, nothing was charged; `unknown`, it never said (the debits are named by request id).
 */
export interface UnsettledBatch {
  readonly transactionId: string;
  readonly outcome: CommitStatus;
  readonly debits: ReadonlyArray<{ readonly accountId: number; readonly cost: number; readonly requestId: string; readonly details: DebitDetails }>;
}

/**
 * A debit not made because its client was gone by the time its batch was written (issue 31):
 * nothing would reach it, so nothing is taken. See DebitBatcher.debit's `live`.
 */
export const CLIENT_GONE = Symbol('client gone');

/** What a queued debit settles with: the writer's outcome, or CLIENT_GONE. */
export type QueuedDebitResult = DebitResult | typeof CLIENT_GONE;

interface PendingDebit {
  readonly accountId: number;
  readonly cost: number;
  readonly details: DebitDetails;
  readonly live: (() => boolean) | undefined;
  resolve(result: QueuedDebitResult): void;
  reject(error: unknown): void;
}

interface PendingFree extends FreeLookupRow {
  resolve(): void;
  reject(error: unknown): void;
}

/** Debits written in one transaction at most (and, apart from them, free rows). */
const MAX_BATCH = 512;

const NO_FREES: readonly PendingFree[] = [];

/**
 * Group commit for debits. Debits that arrive while the event loop is busy are written together in
 * one transaction: each is still its own conditional update with its own ledger row, and each
 * caller is answered only after the COMMIT that made its debit durable. If the transaction fails,
 * none of its debits happened and every caller gets the error (and no data). A COMMIT whose answer
 * is lost with the connection is settled by the writer (Storage.transaction's `knownOutcome`):
 * committed, the callers are answered as usual; the batch is never written again.
 *
 * Free lookups' ledger rows (`free`) join the same batches from a queue of their own, so a batch
 * of debits alone is built exactly as before; each free caller is answered after the COMMIT too,
 * or with the error when the transaction failed.
 */
export class DebitBatcher {
  private queue: PendingDebit[] = [];
  private frees: PendingFree[] = [];
  private scheduled = false;
  /** One batch is written at a time; debits arriving meanwhile form the next, larger batch. */
  private writing = false;

  constructor(
    private readonly writer: Pick<DebitWriter, 'write' | 'reverse'>,
    /** Told what became of a batch whose outcome was unknown when its callers were answered. */
    private readonly onUnsettled?: (batch: UnsettledBatch) => void,
  ) {}

  /**
   * The new balance, undefined when the account had too few credits (nothing written), or
   * KEY_TAKEN when the debit carried an Idempotency-Key the account already holds (nothing debited).
   * `live`, when given, is asked once more as the batch is built: false (the client's connection
   * closed while the debit waited) leaves the debit out, settled with CLIENT_GONE.
   */
  debit(accountId: number, cost: number, details: DebitDetails, live?: () => boolean): Promise<QueuedDebitResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ accountId, cost, details, live, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Gives back a committed debit whose answer could not be written (DebitWriter.reverse): the new
   * balance, or undefined when the account is gone. Not batched: it is rare.
   */
  reverse(accountId: number, reversal: ReversalDetails, idempotencyKey?: string): Promise<number | undefined> {
    return this.writer.reverse(accountId, reversal, idempotencyKey);
  }

  /**
   * Writes the ledger row of a lookup that cost nothing (no balance check: it cannot be refused);
   * settles after the COMMIT of the batch it joined, or rejects when that transaction failed.
   */
  free(accountId: number, details: FreeLookupDetails): Promise<void> {
    return new Promise((resolve, reject) => {
      this.frees.push({ accountId, details, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Writes the next batch; `then` rather than an async function: one promise per batch, not two. */
  private flush(): void {
    const batch = withoutGone(this.queue.splice(0, MAX_BATCH));
    const frees = this.frees.length === 0 ? NO_FREES : this.frees.splice(0, MAX_BATCH);
    if (batch.length === 0 && frees.length === 0) return;
    // Batches of one instance never wait for each other's row locks (on PostgreSQL, concurrent
    // batches mostly queued on the same hot account row, holding pool connections).
    this.writing = true;
    let written: Promise<DebitResult[]>;
    try {
      const debits = batch.map(({ accountId, cost, details }) => ({ accountId, cost, details }));
      written = frees.length === 0 ? this.writer.write(debits) : this.writer.write(debits, frees);
    } catch (error) {
      written = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    written.then(
      (balances) => {
        batch.forEach((pending, i) => {
          pending.resolve(balances[i]);
        });
        for (const pending of frees) pending.resolve();
        this.written();
      },
      (error: unknown) => {
        // Never retried: a batch that may have committed would be debited twice.
        if (error instanceof CommitOutcomeUnknown) this.follow(error, batch);
        for (const pending of batch) pending.reject(error);
        for (const pending of frees) pending.reject(error);
        this.written();
      },
    );
  }

  private follow(error: CommitOutcomeUnknown, batch: readonly PendingDebit[]): void {
    const debits = batch.map(({ accountId, cost, details }) => ({ accountId, cost, requestId: details.requestId, details }));
    void error.settled.then((outcome) => this.onUnsettled?.({ transactionId: error.transactionId, outcome, debits }));
  }

  private written(): void {
    this.writing = false;
    if (this.queue.length > 0 || this.frees.length > 0) this.schedule();
  }
}

/**
 * The debits whose client is still there; the others are settled with CLIENT_GONE and left out.
 * One call per debit that has a `live` check; the batch itself is returned when none is gone.
 */
function withoutGone(batch: PendingDebit[]): PendingDebit[] {
  let kept: PendingDebit[] | undefined;
  for (let i = 0; i < batch.length; i++) {
    const pending = batch[i] as PendingDebit;
    if (pending.live === undefined || pending.live()) {
      kept?.push(pending);
      continue;
    }
    kept ??= batch.slice(0, i);
    pending.resolve(CLIENT_GONE);
  }
  return kept ?? batch;
}

/**
 * Gives back every debit of a batch that committed after its lookups were answered "temporarily
 * unavailable" (UnsettledBatch, outcome `committed`), each in a transaction of its own with its
 * `reversal` row and its Idempotency-Key released (DebitWriter.reverse), as an undelivered
 * answer's debit is (issue 31: a failed lookup costs nothing). Never throws: a debit that could
 * not be given back is `given: false`, for the log and an operator's hand.
 */
export async function giveBackUnsettled(
  writer: Pick<DebitWriter, 'reverse'>,
  batch: UnsettledBatch,
  now: () => string,
): Promise<Array<{ readonly requestId: string; readonly accountId: number; readonly cost: number; readonly given: boolean; readonly error?: unknown }>> {
  const results = [];
  for (const { accountId, cost, details } of batch.debits) {
    const { operation, interface: iface, query, requestId, apiKeyId, userId, cap } = details;
    try {
      await writer.reverse(accountId, { operation, interface: iface, query, requestId, cost, createdAt: now(), apiKeyId: apiKeyId ?? null, userId: userId ?? null, source: details.source ?? null, ...(cap ? { cap } : {}) }, details.idempotency?.key);
      results.push({ requestId, accountId, cost, given: true });
    } catch (error) {
      results.push({ requestId, accountId, cost, given: false, error });
    }
  }
  return results;
}
