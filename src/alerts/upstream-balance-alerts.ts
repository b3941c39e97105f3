import type { Clock } from '../shared/clock.js';
import type { Storage } from '../storage/create-database.js';
import type { OperatorEventType, WebhookService } from '../webhooks/webhook.service.js';

/** What the balance watch of a paid upstream tells (upstream-balance.ts). */
export interface BalanceAlertSink {
  /**
   * The balance is at or past the event's threshold: sends the event to the operator's own
   * endpoints unless it has fired and not re-armed (on any instance). Answers whether it was sent.
   */
  fire(provider: string, event: OperatorEventType, details: { readonly credits: number; readonly threshold: number }): Promise<boolean>;
  /** The balance is back above the event's threshold: the next crossing fires again. */
  rearm(provider: string, event: OperatorEventType): Promise<void>;
}

/** What the router tells the operator about a paid upstream (src/providers/routing/upstream-policy.ts). */
export interface UpstreamAlertSink {
  /**
   * Sends `event` with `data` (the provider added) to the operator's own endpoints unless it has
   * fired and not re-armed on any instance. Answers whether it was sent.
   */
  notify(provider: string, event: OperatorEventType, data: Readonly<Record<string, unknown>>): Promise<boolean>;
  rearm(provider: string, event: OperatorEventType): Promise<void>;
}

/**
 * The operator's alerts about its balance at a paid upstream, through the operator's own webhook
 * endpoints (the outbox of docs/webhooks.md). Every instance watches the balance; the fired mark
 * (upstream_alert_marks, migration 0012) is written in the transaction that queues the messages,
 * and only the instance whose insert wins the mark queues them: one alert per crossing, whichever
 * instance sees it first, and none lost if the process dies between the two (both or neither).
 */
export class UpstreamBalanceAlerts implements BalanceAlertSink, UpstreamAlertSink {
  constructor(
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly webhooks: Pick<WebhookService, 'enqueueOperator' | 'enqueued'>,
    private readonly clock: Clock,
  ) {}

  fire(provider: string, event: OperatorEventType, details: { readonly credits: number; readonly threshold: number }): Promise<boolean> {
    return this.once(provider, event, details.credits, { credits: details.credits, threshold: details.threshold });
  }

  notify(provider: string, event: OperatorEventType, data: Readonly<Record<string, unknown>>): Promise<boolean> {
    return this.once(provider, event, 0, data);
  }

  /** The mark and the messages in one transaction: only the instance whose mark wins queues them. */
  private async once(provider: string, event: OperatorEventType, credits: number, data: Readonly<Record<string, unknown>>): Promise<boolean> {
    const now = this.clock.now().toISOString();
    const sent = await this.storage.transaction(async (tx) => {
      const won = await tx.db
        .insertInto('upstream_alert_marks')
        .values({ provider, event, credits, fired_at: now })
        .onConflict((oc) => oc.columns(['provider', 'event']).doNothing())
        .returning('provider')
        .executeTakeFirst();
      if (!won) return false;
      await this.webhooks.enqueueOperator(tx, event, { provider, ...data });
      return true;
    });
    if (sent) this.webhooks.enqueued();
    return sent;
  }

  async rearm(provider: string, event: OperatorEventType): Promise<void> {
    await this.storage.transaction(async (tx) => {
      await tx.db.deleteFrom('upstream_alert_marks').where('provider', '=', provider).where('event', '=', event).execute();
    });
  }
}
