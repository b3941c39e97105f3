import { sql, type Selectable } from 'kysely';
import type { Storage } from '../storage/create-database.js';
import type { Db, Tx, WebhookDeliveriesTable, WebhookEndpointsTable, WebhookMessagesTable } from '../storage/database.js';

/** A webhook endpoint as the services see it (the secrets stay in the repository and sender). */
export interface WebhookEndpoint {
  readonly id: number;
  /** null: an operator endpoint, told about every account. */
  readonly accountId: number | null;
  readonly url: string;
  readonly description: string;
  readonly enabled: boolean;
  readonly events: readonly string[];
  readonly createdBy: 'account' | 'operator';
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Until when the previous secret still signs (a rotation's grace period), if it does. */
  readonly previousSecretUntil: string | null;
}

/** An endpoint with what signing needs. */
export interface EndpointWithSecrets extends WebhookEndpoint {
  readonly secret: string;
  readonly previousSecret: string | null;
}

export interface WebhookMessage {
  readonly id: string;
  readonly endpointId: number;
  readonly accountId: number | null;
  readonly eventType: string;
  readonly payload: string;
  readonly status: 'pending' | 'delivered' | 'failed';
  /** Attempts started, including the one a claim starts. */
  readonly attempts: number;
  readonly nextAttemptAt: string;
  readonly createdAt: string;
}

export interface WebhookDelivery {
  readonly id: number;
  readonly messageId: string;
  readonly endpointId: number;
  readonly attempt: number;
  readonly startedAt: string;
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
  readonly succeeded: boolean;
  /** The first bytes of the receiver's answer (RESPONSE_EXCERPT_BYTES, as UTF-8 text); null when none came. */
  readonly responseBody: string | null;
}

export interface NewMessage {
  readonly id: string;
  readonly endpointId: number;
  readonly accountId: number | null;
  readonly eventType: string;
  readonly payload: string;
}

/** What one attempt came to, as the sender reports it. */
export interface AttemptOutcome {
  readonly startedAt: string;
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
  readonly succeeded: boolean;
  /** The first bytes of the answer's body; null (or absent) when no answer came. */
  readonly responseBody?: string | null | undefined;
}

/** What a resend found: the message put back in the outbox, one being sent at this moment, or none. */
export type RequeueResult = 'requeued' | 'in-flight' | 'missing';

function toEndpoint(row: Selectable<WebhookEndpointsTable>): EndpointWithSecrets {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    description: row.description,
    enabled: row.enabled === 1,
    events: JSON.parse(row.events) as string[],
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    previousSecretUntil: row.previous_secret_until,
    secret: row.secret,
    previousSecret: row.previous_secret,
  };
}

function toMessage(row: Selectable<WebhookMessagesTable>): WebhookMessage {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    accountId: row.account_id,
    eventType: row.event_type,
    payload: row.payload,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
  };
}

function toDelivery(row: Selectable<WebhookDeliveriesTable>): WebhookDelivery {
  return {
    id: row.id,
    messageId: row.message_id,
    endpointId: row.endpoint_id,
    attempt: row.attempt,
    startedAt: row.started_at,
    statusCode: row.status_code,
    durationMs: row.duration_ms,
    error: row.error,
    succeeded: row.succeeded === 1,
    responseBody: row.response_body,
  };
}

/**
 * Claims up to `limit` due messages for `owner` until `leaseUntil`, counting the attempt each
 * claim starts. One statement, so two instances never claim the same row. How a second claimer
 * behaves is the engines' difference, named by Storage.skipLocked: on PostgreSQL the inner SELECT
 * locks the rows it picks and skips rows another claimer holds, and the outer WHERE repeats the
 * conditions because READ COMMITTED re-checks them on the row as the other's commit left it; on
 * SQLite the statement simply runs after the other's commit and sees the lease. The rows are
 * picked in a MATERIALIZED common table expression: as `id in (select ... limit n for update skip
 * locked)` PostgreSQL may run the subquery more than once in one UPDATE and claim more than
 * `limit` rows (seen in the test).
 */
export async function claimDueMessages(
  storage: Pick<Storage, 'db' | 'skipLocked'>,
  owner: string,
  now: string,
  leaseUntil: string,
  limit: number,
): Promise<WebhookMessage[]> {
  const due = sql`status = 'pending' and next_attempt_at <= ${now} and (lease_until is null or lease_until < ${now})`;
  const { rows } = await sql<Selectable<WebhookMessagesTable>>`
    with picked as materialized (
      select id from webhook_messages where ${due} order by next_attempt_at limit ${limit} ${storage.skipLocked}
    )
    update webhook_messages
    set lease_until = ${leaseUntil}, lease_owner = ${owner}, attempts = attempts + 1, updated_at = ${now}
    where ${due} and id in (select id from picked)
    returning *`.execute(storage.db);
  return rows.map(toMessage);
}

/**
 * Endpoints, the outbox and the delivery log. Writes that change several rows together take the
 * transaction first (STYLE.md 6); the caller opens it with Storage.transaction.
 */
export class WebhookRepository {
  private readonly db: Db;

  constructor(private readonly storage: Pick<Storage, 'db' | 'skipLocked'>) {
    this.db = storage.db;
  }

  async insertEndpoint(tx: Tx, row: Omit<Selectable<WebhookEndpointsTable>, 'id'>): Promise<EndpointWithSecrets> {
    const inserted = await tx.db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
    return toEndpoint(inserted);
  }

  /**
   * The URLs of the endpoints of `accountId` (null: the operator's own), with their ids, read in
   * `tx`: what a create or a URL change checks against, under Storage.serialize.
   */
  async urls(tx: Tx, accountId: number | null): Promise<Array<{ id: number; url: string }>> {
    return tx.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url'])
      .where('account_id', accountId === null ? 'is' : '=', accountId)
      .execute();
  }

  /** One endpoint; in `tx` when given (a change reading what it replaces). */
  async endpoint(id: number, tx?: Tx): Promise<EndpointWithSecrets | undefined> {
    const row = await (tx?.db ?? this.db).selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toEndpoint(row) : undefined;
  }

  /** Endpoints of one account, or the operator's own (accountId null). */
  async endpoints(accountId: number | null): Promise<EndpointWithSecrets[]> {
    const rows = await this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('account_id', accountId === null ? 'is' : '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map(toEndpoint);
  }

  /** Enabled endpoints that want `eventType` about `accountId`: the account's own and the operator's. */
  async subscribers(tx: Tx, accountId: number, eventType: string): Promise<EndpointWithSecrets[]> {
    const rows = await tx.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('enabled', '=', 1)
      .where((eb) => eb.or([eb('account_id', '=', accountId), eb('account_id', 'is', null)]))
      .orderBy('id')
      .execute();
    return rows.map(toEndpoint).filter((e) => e.events.includes(eventType));
  }

  /** Enabled endpoints of the operator's own (told about the service itself) that want `eventType`. */
  async operatorSubscribers(tx: Tx, eventType: string): Promise<EndpointWithSecrets[]> {
    const rows = await tx.db.selectFrom('webhook_endpoints').selectAll().where('enabled', '=', 1).where('account_id', 'is', null).orderBy('id').execute();
    return rows.map(toEndpoint).filter((e) => e.events.includes(eventType));
  }

  async updateEndpoint(tx: Tx, id: number, changes: Partial<Pick<Selectable<WebhookEndpointsTable>, 'url' | 'description' | 'enabled' | 'events' | 'secret' | 'previous_secret' | 'previous_secret_until'>>, updatedAt: string): Promise<EndpointWithSecrets | undefined> {
    const row = await tx.db
      .updateTable('webhook_endpoints')
      .set({ ...changes, updated_at: updatedAt })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row ? toEndpoint(row) : undefined;
  }

  /** Removes an endpoint with its messages and their delivery log. */
  async deleteEndpoint(tx: Tx, id: number): Promise<boolean> {
    await tx.db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
    await tx.db.deleteFrom('webhook_messages').where('endpoint_id', '=', id).execute();
    const result = await tx.db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async insertMessages(tx: Tx, messages: readonly NewMessage[], now: string): Promise<void> {
    if (messages.length === 0) return;
    await tx.db
      .insertInto('webhook_messages')
      .values(
        messages.map((m) => ({
          id: m.id,
          endpoint_id: m.endpointId,
          account_id: m.accountId,
          event_type: m.eventType,
          payload: m.payload,
          status: 'pending' as const,
          attempts: 0,
          next_attempt_at: now,
          lease_until: null,
          lease_owner: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  }

  /**
   * Claims due messages (claimDueMessages). An idle outbox, the usual case, costs one indexed read:
   * every instance polls every second, and on SQLite the claiming UPDATE would take the write
   * lock each time even when it matched nothing.
   */
  async claimDue(owner: string, now: string, leaseUntil: string, limit: number): Promise<WebhookMessage[]> {
    const due = await this.db
      .selectFrom('webhook_messages')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .limit(1)
      .executeTakeFirst();
    if (!due) return [];
    return claimDueMessages(this.storage, owner, now, leaseUntil, limit);
  }

  /**
   * Records an attempt and settles the message: delivered, failed for good, or due again at
   * `retryAt`. Only the lease owner may settle it; returns false when the lease was lost (another
   * instance took the message over after the lease ran out), and then writes nothing.
   */
  async settle(tx: Tx, message: WebhookMessage, owner: string, outcome: AttemptOutcome, retryAt: string | null, now: string): Promise<boolean> {
    const status = outcome.succeeded ? 'delivered' : retryAt === null ? 'failed' : 'pending';
    const updated = await tx.db
      .updateTable('webhook_messages')
      .set({ status, next_attempt_at: retryAt ?? now, lease_until: null, lease_owner: null, updated_at: now })
      .where('id', '=', message.id)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) return false;
    await tx.db
      .insertInto('webhook_deliveries')
      .values({
        message_id: message.id,
        endpoint_id: message.endpointId,
        attempt: message.attempts,
        started_at: outcome.startedAt,
        status_code: outcome.statusCode,
        duration_ms: outcome.durationMs,
        error: outcome.error,
        succeeded: outcome.succeeded ? 1 : 0,
        response_body: outcome.responseBody ?? null,
      })
      .execute();
    return true;
  }

  /**
   * Puts a settled or waiting message of `endpointId` back in the outbox, due at `now`, for one
   * more attempt with the same id and payload (a resend, as Svix and Stripe resend an event: the
   * receiver can still tell a repeat by its `webhook-id`). A message whose lease is live is
   * being sent at this moment and is left alone, so a resend never races the attempt in flight.
   */
  async requeue(tx: Tx, endpointId: number, messageId: string, now: string): Promise<RequeueResult> {
    const updated = await tx.db
      .updateTable('webhook_messages')
      .set({ status: 'pending', next_attempt_at: now, lease_until: null, lease_owner: null, updated_at: now })
      .where('id', '=', messageId)
      .where('endpoint_id', '=', endpointId)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .executeTakeFirst();
    if (updated.numUpdatedRows > 0n) return 'requeued';
    const row = await tx.db.selectFrom('webhook_messages').select('id').where('id', '=', messageId).where('endpoint_id', '=', endpointId).executeTakeFirst();
    return row ? 'in-flight' : 'missing';
  }

  async message(id: string): Promise<WebhookMessage | undefined> {
    const row = await this.db.selectFrom('webhook_messages').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toMessage(row) : undefined;
  }

  async messages(endpointId: number, limit: number): Promise<WebhookMessage[]> {
    const rows = await this.db.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', endpointId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toMessage);
  }

  /** The delivery log of an endpoint, newest first. */
  async deliveries(endpointId: number, limit: number): Promise<WebhookDelivery[]> {
    const rows = await this.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toDelivery);
  }
}
