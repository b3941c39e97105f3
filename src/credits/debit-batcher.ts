import type { Storage } from '../storage/create-database.js';
import type { CreditLedgerRepository, DebitDetails } from './credit-ledger.repository.js';

interface PendingDebit {
  readonly accountId: number;
  readonly cost: number;
  readonly details: DebitDetails;
  resolve(balance: number | undefined): void;
  reject(error: unknown): void;
}

/** Debits written in one transaction at most. */
const MAX_BATCH = 256;

/**
 * Group commit for debits. Debits that arrive while the event loop is busy are written together in
 * one transaction: each is still its own conditional update with its own ledger row, and each
 * caller is answered only after the COMMIT that made its debit durable. If the transaction fails,
 * none of its debits happened and every caller gets the error (and no data).
 *
 * Within a batch, accounts are updated in ascending id, so concurrent batches on several instances
 * lock them in the same order and cannot deadlock; an account's debits in one batch are written
 * together (CreditLedgerRepository.debitMany).
 */
export class DebitBatcher {
  private queue: PendingDebit[] = [];
  private scheduled = false;

  constructor(
    private readonly storage: Pick<Storage, 'transact'>,
    private readonly ledger: CreditLedgerRepository,
  ) {}

  /** The new balance, or undefined when the account had too few credits (nothing written). */
  debit(accountId: number, cost: number, details: DebitDetails): Promise<number | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ accountId, cost, details, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, MAX_BATCH);
    if (this.queue.length > 0) this.schedule();
    if (batch.length === 0) return;
    // Grouped by account, accounts in ascending id (the lock order), debits in arrival order.
    const byAccount = new Map<number, PendingDebit[]>();
    for (const pending of batch) byAccount.set(pending.accountId, [...(byAccount.get(pending.accountId) ?? []), pending]);
    const accounts = [...byAccount.keys()].sort((a, b) => a - b);
    try {
      const balances = await this.storage.transact(async (run) => {
        const results = new Map<PendingDebit, number | undefined>();
        for (const accountId of accounts) {
          const group = byAccount.get(accountId) ?? [];
          const after = await this.ledger.debitMany(run, accountId, group);
          group.forEach((pending, i) => results.set(pending, after[i]));
        }
        return results;
      });
      for (const pending of batch) pending.resolve(balances.get(pending));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    }
  }
}
