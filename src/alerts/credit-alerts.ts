import { sql } from 'kysely';
import { SYSTEM_ACTOR, type Actor, type AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/domain-error.js';
import type { Storage } from '../storage/create-database.js';
import type { Db, Tx } from '../storage/database.js';
import type { EventType, WebhookService } from '../webhooks/webhook.service.js';

/** Most thresholds per account; highest allowed threshold. */
export const MAX_THRESHOLDS = 10;
export const MAX_THRESHOLD = 1_000_000_000;

/** How long a ledger row stays in the sweep's window: longer than any debit transaction lasts. */
const SWEEP_LAG_MS = 30_000;
/** Ledger rows examined per sweep round at most (a backlog is read over several rounds). */
const SWEEP_ROWS = 10_000;

export class CreditAlertError extends DomainError<'NOT_FOUND' | 'INVALID'> {
  override readonly name = 'CreditAlertError';
}

/** An account's thresholds and whether they are its own or the server default. */
export interface AlertThresholds {
  readonly thresholds: readonly number[];
  readonly custom: boolean;
  /** Thresholds that fired and have not re-armed yet. */
  readonly fired: readonly number[];
}

/** Whether a debit of `cost` that left `balanceAfter` took the balance down across `threshold`. */
export function crossesDownwards(threshold: number, cost: number, balanceAfter: number): boolean {
  return balanceAfter <= threshold && balanceAfter + cost > threshold;
}

/**
 * Re-arms an account's thresholds that a top-up took the balance back above, in the top-up's own
 * transaction (CreditLedgerRepository.topUp), so a later crossing fires again.
 */
export async function rearmCreditAlerts(tx: Tx, accountId: number, balance: number): Promise<void> {
  await tx.db.deleteFrom('credit_alert_fired').where('account_id', '=', accountId).where('threshold', '<', balance).execute();
}

/** Checks and orders a list of thresholds (highest first, no duplicates). */
export function normaliseThresholds(values: readonly number[]): number[] {
  if (values.length > MAX_THRESHOLDS) throw new CreditAlertError('INVALID', `at most ${MAX_THRESHOLDS} thresholds`);
  for (const v of values) {
    if (!Number.isInteger(v) || v < 0 || v > MAX_THRESHOLD) throw new CreditAlertError('INVALID', `thresholds must be whole numbers from 0 to ${MAX_THRESHOLD}`);
  }
  return [...new Set(values)].sort((a, b) => b - a);
}

export interface CreditAlertsOptions {
  /** Thresholds of accounts without their own (CREDIT_ALERT_THRESHOLDS). */
  readonly defaults: readonly number[];
  /** Where threshold changes are recorded, in the change's own transaction (issue 16). */
  readonly audit: AuditLog;
  readonly log?: { warn(message: string, error?: unknown): void };
}

/**
 * Low-credit alerts (issue 16). A threshold fires once when a debit takes the balance from above
 * it to it or below, and re-arms when a top-up takes the balance back above it.
 *
 * Detection costs the lookup path no query: `onDebit` compares the balance the debit already
 * returned with the account's thresholds held in memory, and only on a crossing starts (without
 * awaiting) a small transaction that marks the threshold fired and writes the outbox messages.
 * That runs right after the debit's commit, not inside it: the debit transaction is
 * group-committed and shared by up to 512 lookups, and the crossing is already durable in it, as
 * the ledger row's `balance_after`. An alert lost to a crash between that commit and the
 * outbox write is found again by `sweep`, which reads the ledger rows written since its last
 * round (an id range scan) for crossings; firing is idempotent (the `credit_alert_fired` primary
 * key), so the sweep and the lookup path never send one crossing twice.
 */
export class CreditAlerts {
  /** Accounts with their own thresholds; every other account uses the defaults. */
  private custom = new Map<number, readonly number[]>();
  /** A sweep found no cursor and an empty ledger: later rounds read it from the start. */
  private ledgerWasEmpty = false;
  private readonly defaults: readonly number[];
  private readonly db: Db;

  constructor(
    private readonly storage: Pick<Storage, 'db' | 'transaction'>,
    private readonly webhooks: WebhookService,
    private readonly clock: Clock,
    private readonly options: CreditAlertsOptions,
  ) {
    this.defaults = normaliseThresholds(options.defaults);
    this.db = storage.db;
  }

  /**
   * The thresholds the account's debits are checked against: its own or the defaults, and always
   * 0, so `credits.depleted` fires when the balance runs out whatever thresholds were set
   * ("7, 3" too; issue 26 item 14).
   */
  private thresholdsOf(accountId: number): readonly number[] {
    const set = this.custom.get(accountId) ?? this.defaults;
    return set.includes(0) ? set : [...set, 0];
  }

  /**
   * Called by the lookup path after each committed debit; synchronous and query-free unless the
   * debit crossed a threshold.
   */
  onDebit(accountId: number, cost: number, balanceAfter: number): void {
    for (const threshold of this.thresholdsOf(accountId)) {
      if (crossesDownwards(threshold, cost, balanceAfter)) {
        this.fire(accountId, threshold, balanceAfter).catch((error: unknown) => {
          // The sweep finds this crossing again in the ledger.
          this.options.log?.warn(`credit alert for account ${accountId} at ${threshold} not written yet`, error);
        });
      }
    }
  }

  /**
   * Marks `threshold` fired for the account and writes its webhook messages, in one transaction;
   * does nothing when it has fired already, or when the balance is above it again by now (a top-up
   * came first). Returns whether it fired.
   */
  async fire(accountId: number, threshold: number, balance: number): Promise<boolean> {
    const now = this.clock.now().toISOString();
    const fired = await this.storage.transaction(async (tx) => {
      const inserted = await tx.db
        .insertInto('credit_alert_fired')
        .columns(['account_id', 'threshold', 'fired_at'])
        .expression((eb) =>
          eb
            .selectFrom('accounts')
            .select([eb.val(accountId).as('account_id'), eb.val(threshold).as('threshold'), eb.val(now).as('fired_at')])
            .where('id', '=', accountId)
            .where('credits', '<=', threshold),
        )
        .onConflict((oc) => oc.columns(['account_id', 'threshold']).doNothing())
        .executeTakeFirst();
      if ((inserted.numInsertedOrUpdatedRows ?? 0n) === 0n) return false;
      const account = await tx.db.selectFrom('accounts').select(['username', 'credits']).where('id', '=', accountId).executeTakeFirstOrThrow();
      const type: EventType = threshold === 0 ? 'credits.depleted' : 'credits.low';
      await this.webhooks.enqueue(tx, accountId, type, {
        account: { id: accountId, username: account.username },
        threshold,
        balance,
        currentBalance: account.credits,
      });
      return true;
    });
    if (fired) this.webhooks.enqueued();
    return fired;
  }

  /** The account's thresholds, whether they are its own, and which have fired. */
  async thresholds(accountId: number): Promise<AlertThresholds> {
    const [account, own, fired] = await Promise.all([
      this.db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst(),
      this.db.selectFrom('credit_alert_settings').select('thresholds').where('account_id', '=', accountId).executeTakeFirst(),
      this.db.selectFrom('credit_alert_fired').select('threshold').where('account_id', '=', accountId).orderBy('threshold', 'desc').execute(),
    ]);
    if (!account) throw new CreditAlertError('NOT_FOUND', `no account ${accountId}`);
    return {
      thresholds: own ? (JSON.parse(own.thresholds) as number[]) : this.defaults,
      custom: own !== undefined,
      fired: fired.map((r) => r.threshold),
    };
  }

  /**
   * Sets the account's own thresholds (null: back to the server default), recorded in the audit
   * log as `actor`'s change in the same transaction. Thresholds that no longer exist lose their
   * fired mark. Takes effect at once on this instance, and on the others at their next sweep (their
   * lookups compare with the thresholds they hold until then; the sweep reads the ledger with the
   * new ones).
   */
  async setThresholds(accountId: number, values: readonly number[] | null, actor: Actor = SYSTEM_ACTOR): Promise<AlertThresholds> {
    const thresholds = values === null ? null : normaliseThresholds(values);
    const now = this.clock.now().toISOString();
    await this.storage.transaction(async (tx) => {
      const account = await tx.db.selectFrom('accounts').select(['id', 'username']).where('id', '=', accountId).executeTakeFirst();
      if (!account) throw new CreditAlertError('NOT_FOUND', `no account ${accountId}`);
      const own = await tx.db.selectFrom('credit_alert_settings').select('thresholds').where('account_id', '=', accountId).executeTakeFirst();
      if (thresholds === null) {
        await tx.db.deleteFrom('credit_alert_settings').where('account_id', '=', accountId).execute();
      } else {
        await tx.db
          .insertInto('credit_alert_settings')
          .values({ account_id: accountId, thresholds: JSON.stringify(thresholds), updated_at: now })
          .onConflict((oc) => oc.column('account_id').doUpdateSet({ thresholds: JSON.stringify(thresholds), updated_at: now }))
          .execute();
      }
      const kept = thresholds ?? this.defaults;
      let stale = tx.db.deleteFrom('credit_alert_fired').where('account_id', '=', accountId);
      if (kept.length > 0) stale = stale.where('threshold', 'not in', kept);
      await stale.execute();
      await this.options.audit.record(tx, actor, {
        action: thresholds === null ? 'alerts.reset' : 'alerts.set',
        targetKind: 'account',
        target: account.username,
        before: own ? { thresholds: JSON.parse(own.thresholds) as number[], custom: true } : { thresholds: this.defaults, custom: false },
        after: { thresholds: kept, custom: thresholds !== null },
      });
    });
    if (thresholds === null) this.custom.delete(accountId);
    else this.custom.set(accountId, thresholds);
    return this.thresholds(accountId);
  }

  /** Reloads the accounts' own thresholds (other instances may have changed them). */
  async refresh(): Promise<void> {
    const rows = await this.db.selectFrom('credit_alert_settings').select(['account_id', 'thresholds']).execute();
    this.custom = new Map(rows.map((r) => [r.account_id, JSON.parse(r.thresholds) as number[]]));
  }

  /**
   * The safety net, run on a timer by every instance: re-arms thresholds whose account is above
   * them again (a top-up by a path that did not re-arm), then fires every crossing in the ledger
   * rows written since the last round that has not fired yet. Rows of the last SWEEP_LAG_MS are
   * read again next round: on PostgreSQL ids are taken before commit, so a row with a lower id
   * can become visible after a higher one. Returns how many alerts it fired.
   */
  async sweep(): Promise<number> {
    await this.refresh();
    await this.db
      .deleteFrom('credit_alert_fired')
      .where((eb) =>
        eb.exists(eb.selectFrom('accounts').select(sql.lit(1).as('one')).whereRef('accounts.id', '=', 'credit_alert_fired.account_id').whereRef('accounts.credits', '>', 'credit_alert_fired.threshold')),
      )
      .execute();

    const stored = await this.db.selectFrom('credit_alert_cursor').select('ledger_id').where('name', '=', 'sweep').executeTakeFirst();
    let from: number;
    if (stored) from = stored.ledger_id;
    else if (this.ledgerWasEmpty) from = 0;
    else {
      // First round on this store: start at the end of the ledger (history fires nothing). An
      // empty ledger writes nothing, so a new store stays empty (migrate-store copies only into
      // an empty database).
      const { last } = await this.db.selectFrom('ledger').select((eb) => eb.fn.max<number | null>('id').as('last')).executeTakeFirstOrThrow();
      if (last === null) this.ledgerWasEmpty = true;
      else await this.db.insertInto('credit_alert_cursor').values({ name: 'sweep', ledger_id: last }).onConflict((oc) => oc.column('name').doNothing()).execute();
      return 0;
    }
    // 0 is always armed (thresholdsOf), so every debit to 0 or below is looked at.
    const highest = Math.max(...this.defaults, ...[...this.custom.values()].flat(), 0);
    const rows = await this.db
      .selectFrom('ledger')
      .select(['id', 'account_id', 'delta', 'balance_after', 'created_at'])
      .where('id', '>', from)
      .orderBy('id')
      .limit(SWEEP_ROWS)
      .execute();
    let fired = 0;
    for (const row of rows) {
      if (row.delta >= 0 || row.balance_after > highest) continue;
      for (const threshold of this.thresholdsOf(row.account_id)) {
        if (crossesDownwards(threshold, -row.delta, row.balance_after) && (await this.fire(row.account_id, threshold, row.balance_after))) fired += 1;
      }
    }
    const settledBefore = new Date(this.clock.now().getTime() - SWEEP_LAG_MS).toISOString();
    let next = from;
    for (const row of rows) {
      if (row.created_at >= settledBefore) break;
      next = row.id;
    }
    if (rows.length === SWEEP_ROWS && next === from) next = rows[rows.length - 1]?.id ?? next;
    if (next > from) {
      await this.db
        .insertInto('credit_alert_cursor')
        .values({ name: 'sweep', ledger_id: next })
        .onConflict((oc) => oc.column('name').doUpdateSet({ ledger_id: next }).where('credit_alert_cursor.ledger_id', '<', next))
        .execute();
    }
    return fired;
  }
}

/** Runs `sweep` every `intervalMs` until stopped; never awaited by anything on the lookup path. */
export class CreditAlertSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly alerts: CreditAlerts,
    private readonly intervalMs: number,
    private readonly log?: { warn(message: string, error?: unknown): void },
  ) {}

  /** The first round comes after one interval, not at start-up: a server started on a new store writes nothing to it at once. */
  start(): void {
    if (this.timer) return;
    this.tick(this.intervalMs);
  }

  private tick(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.running = this.alerts
        .sweep()
        .then(() => undefined)
        .catch((error: unknown) => this.log?.warn('credit alert sweep failed', error))
        .finally(() => {
          this.running = undefined;
          if (this.timer) this.tick(this.intervalMs);
        });
    }, delayMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
