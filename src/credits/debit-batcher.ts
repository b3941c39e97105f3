import type { DebitDetails } from './credit-ledger.repository.js';
import type { DebitResult, DebitWriter } from './debit-writer.js';

interface PendingDebit {
  readonly accountId: number;
  readonly cost: number;
  readonly details: DebitDetails;
  resolve(result: DebitResult): void;
  reject(error: unknown): void;
}

/** Debits written in one transaction at most. */
const MAX_BATCH = 512;

/**
 * Group commit for debits. Debits that arrive while the event loop is busy are written together in
 * one transaction: each is still its own conditional update with its own ledger row, and each
 * caller is answered only after the COMMIT that made its debit durable. If the transaction fails,
 * none of its debits happened and every caller gets the error (and no data).
 */
export class DebitBatcher {
  private queue: PendingDebit[] = [];
  private scheduled = false;
  /** One batch is written at a time; debits arriving meanwhile form the next, larger batch. */
  private writing = false;

  constructor(private readonly writer: Pick<DebitWriter, 'write'>) {}

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

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, MAX_BATCH);
    if (batch.length === 0) return;
    // Batches of one instance never wait for each other's row locks (on PostgreSQL, concurrent
    // batches mostly queued on the same hot account row, holding pool connections).
    this.writing = true;
    try {
      const balances = await this.writer.write(batch.map(({ accountId, cost, details }) => ({ accountId, cost, details })));
      batch.forEach((pending, i) => {
        pending.resolve(balances[i]);
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      this.writing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }
}
