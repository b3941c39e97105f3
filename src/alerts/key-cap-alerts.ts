import type { Storage } from '../storage/create-database.js';
import type { WebhookService } from '../webhooks/webhook.service.js';

/** A capped key's spend moved by a committed debit (for the cap alerts: KeyCapAlerts). */
export interface KeySpend {
  readonly accountId: number;
  readonly keyId: number;
  readonly cost: number;
  /** The key's spend in the period after this debit, and its cap then. */
  readonly spentAfter: number;
  readonly cap: number;
  readonly periodKey: string;
}

/** The shares of a key's cap that raise the account's alert (issue 33): a warning, then the cap reached. */
export const KEY_CAP_ALERT_PERCENTS = [80, 100] as const;

/** The credits at which `percent` of a cap is reached (80% of 10: 8; rounded up, so it is never early). */
export function capMark(cap: number, percent: number): number {
  return Math.ceil((cap * percent) / 100);
}

/** The alert shares a debit of `cost` that left the key's spend at `spentAfter` went across. */
export function capSharesCrossed(cap: number, cost: number, spentAfter: number): number[] {
  return KEY_CAP_ALERT_PERCENTS.filter((percent) => {
    const mark = capMark(cap, percent);
    return spentAfter >= mark && spentAfter - cost < mark;
  });
}

/**
 * Alerts for API keys' credit caps (issue 33), through the account's alert path: webhook messages
 * `key.cap.warning` (80%) and `key.cap.reached` (100%) to the account's endpoints that subscribe,
 * as the low-credit alerts (credit-alerts.ts) send `credits.low` and `credits.depleted`.
 *
 * The lookup path pays nothing for it: the debit writer reports each capped key's spend after its
 * COMMIT (KeySpend), and only a debit that went across a mark starts a small transaction, not
 * awaited. Marks need no "fired" record: the key's spend moves by conditional updates in debit
 * transactions, so within a period exactly one committed debit goes across each mark. A process
 * that dies between that commit and the outbox write loses that alert (no sweep re-reads the
 * caps); the console's key list shows the same state from the store (the spend against the cap).
 */
export class KeyCapAlerts {
  constructor(
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly webhooks: WebhookService,
    private readonly log?: { warn(message: string, error?: unknown): void },
  ) {}

  onKeySpend(spend: KeySpend): void {
    for (const percent of capSharesCrossed(spend.cap, spend.cost, spend.spentAfter)) {
      this.fire(spend, percent).catch((error: unknown) => {
        this.log?.warn(`key cap alert for key ${spend.keyId} at ${percent}% not written`, error);
      });
    }
  }

  /** Writes the alert's webhook messages; answers how many endpoints get it. */
  async fire(spend: KeySpend, percent: number): Promise<number> {
    const sent = await this.storage.transaction(async (tx) => {
      const row = await tx.db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .select(['api_keys.name', 'api_keys.cap_period', 'accounts.username'])
        .where('api_keys.id', '=', spend.keyId)
        .executeTakeFirst();
      if (!row) return 0;
      return this.webhooks.enqueue(tx, spend.accountId, percent >= 100 ? 'key.cap.reached' : 'key.cap.warning', {
        account: { id: spend.accountId, username: row.username },
        key: { id: spend.keyId, name: row.name },
        cap: spend.cap,
        period: row.cap_period,
        periodKey: spend.periodKey,
        spent: spend.spentAfter,
        percent,
      });
    });
    if (sent > 0) this.webhooks.enqueued();
    return sent;
  }
}
