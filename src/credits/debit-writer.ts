import type { Storage } from '../storage/create-database.js';
import type { CreditLedgerRepository, DebitDetails } from './credit-ledger.repository.js';

export interface DebitRequest {
  readonly accountId: number;
  readonly cost: number;
  readonly details: DebitDetails;
}

/**
 * Writes a batch of debits in one transaction: accounts in ascending id (the lock order, so
 * batches on several instances cannot deadlock), each account's debits together and in arrival
 * order (CreditLedgerRepository.debitMany).
 */
export class DebitWriter {
  constructor(
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly ledger: CreditLedgerRepository,
  ) {}

  /**
   * Each debit's balance after it, or undefined where the balance did not cover it. All or
   * nothing: if it throws, none happened.
   */
  write(batch: readonly DebitRequest[]): Promise<Array<number | undefined>> {
    const byAccount = new Map<number, number[]>();
    batch.forEach((request, index) => {
      const indexes = byAccount.get(request.accountId);
      if (indexes) indexes.push(index);
      else byAccount.set(request.accountId, [index]);
    });
    const accounts = [...byAccount.keys()].sort((a, b) => a - b);
    return this.storage.transaction(async (tx) => {
      const results = new Array<number | undefined>(batch.length);
      for (const accountId of accounts) {
        const indexes = byAccount.get(accountId) ?? [];
        const after = await this.ledger.debitMany(
          tx,
          accountId,
          indexes.map((i) => batch[i] as DebitRequest),
        );
        indexes.forEach((batchIndex, i) => {
          results[batchIndex] = after[i];
        });
      }
      return results;
    });
  }
}
