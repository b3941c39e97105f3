import type { DebitDetails, FreeLookupDetails, FreeLookupRow } from './credit-ledger.repository.js';
import type { DebitResult, DebitWriter } from './debit-writer.js';
import { CommitOutcomeUnknown, type CommitStatus } from '../storage/store-unavailable.js';

/**
 * A batch whose COMMIT's answer was lost with the database connection and whose outcome the
 * database could not tell within DB_COMMIT_SETTLE_SECONDS: its lookups were answered
 * "temporarily unavailable". `outcome` is what the database said later (CommitOutcomeUnknown's
 * `settled`): `committed` means those debits stand without their answers, for an operator to
 * refund (named by request id); `aborted`, nothing was charged; `unknown`, it never said.
 */
export interface UnsettledBatch {
  readonly transactionId: string;
  readonly outcome: CommitStatus;
  readonly debits: ReadonlyArray<{ readonly accountId: number; readonly cost: number; readonly requestId: string }>;
}

interface PendingDebit {
  readonly accountId: number;
  readonly cost: number;
  readonly details: DebitDetails;
  resolve(result: DebitResult): void;
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
    private readonly writer: Pick<DebitWriter, 'write'>,
    /** Told what became of a batch whose outcome was unknown when its callers were answered. */
    private readonly onUnsettled?: (batch: UnsettledBatch) => void,
  ) {}

  /**
   * The new balance, undefined when the account had too few credits (nothing written), or
   * KEY_TAKEN when the debit carried an Idempotency-Key the account already holds (nothing debited).
   */
  debit(accountId: number, cost: number, details: DebitDetails): Promise<DebitResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ accountId, cost, details, resolve, reject });
      this.schedule();
    });
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
    const batch = this.queue.splice(0, MAX_BATCH);
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
    const debits = batch.map(({ accountId, cost, details }) => ({ accountId, cost, requestId: details.requestId }));
    void error.settled.then((outcome) => this.onUnsettled?.({ transactionId: error.transactionId, outcome, debits }));
  }

  private written(): void {
    this.writing = false;
    if (this.queue.length > 0 || this.frees.length > 0) this.schedule();
  }
}
