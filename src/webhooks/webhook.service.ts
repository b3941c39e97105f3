import { randomBytes } from 'node:crypto';
import { SYSTEM_ACTOR, type Actor, type AuditEntry, type AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/domain-error.js';
import type { Storage } from '../storage/create-database.js';
import type { Tx } from '../storage/database.js';
import { generateWebhookSecret } from './webhook-signature.js';
import { normaliseWebhookUrl, webhookUrlProblem } from './webhook-url.js';
import type { EndpointWithSecrets, NewMessage, WebhookDelivery, WebhookEndpoint, WebhookMessage, WebhookRepository } from './webhook.repository.js';

/** Event types about an account, for its endpoints and the operator's (docs/webhooks.md "Events"). */
export const ACCOUNT_EVENT_TYPES = ['credits.low', 'credits.depleted', 'key.cap.warning', 'key.cap.reached'] as const;
/**
 * Event types about the service itself, for the operator's own endpoints only: the operator's
 * balance at a paid upstream (the original service) fell below its threshold, or to 0
 * (upstream-balance.ts, docs/providers.md); and the router's (src/providers/routing/): a paid
 * upstream out of funds or quota, disabled for a refused key, or at 80 % and 100 % of its
 * monthly budget.
 */
export const OPERATOR_EVENT_TYPES = [
  'upstream.credits.low',
  'upstream.credits.depleted',
  'upstream.out-of-funds',
  'upstream.disabled',
  'upstream.budget.warning',
  'upstream.budget.reached',
] as const;
/** Every event type an endpoint can subscribe to. */
export const EVENT_TYPES = [...ACCOUNT_EVENT_TYPES, ...OPERATOR_EVENT_TYPES] as const;
export type EventType = (typeof ACCOUNT_EVENT_TYPES)[number];
export type OperatorEventType = (typeof OPERATOR_EVENT_TYPES)[number];

/** The event types an endpoint may subscribe to: an account's, or (accountId null) the operator's own, which may have all. */
export function eventTypesFor(accountId: number | null): readonly string[] {
  return accountId === null ? EVENT_TYPES : ACCOUNT_EVENT_TYPES;
}
/** Sent by a test-send, to that endpoint only, whatever it subscribes to. */
export const TEST_EVENT = 'test';

/** Largest grace period of a secret rotation: one week. */
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 3600;
/** Most endpoints one account (or the operator) may register. */
export const MAX_ENDPOINTS = 20;

export type WebhookErrorCode = 'NOT_FOUND' | 'INVALID' | 'ALREADY_EXISTS';

/** A webhook request that cannot be carried out; adapters map the code to their wire format. */
export class WebhookError extends DomainError<WebhookErrorCode> {
  override readonly name = 'WebhookError';
}

/**
 * Who is asking: an account (sees and changes only its own endpoints), or the operator acting on
 * one account's endpoints or on its own (accountId null, told about every account).
 */
export type WebhookScope = { readonly actor: 'account'; readonly accountId: number } | { readonly actor: 'operator'; readonly accountId: number | null };

export interface EndpointInput {
  readonly url: string;
  readonly description?: string | undefined;
  readonly enabled?: boolean | undefined;
  readonly events?: readonly string[] | undefined;
}

/** The Standard Webhooks payload shape: `{type, timestamp, data}`. */
export interface WebhookPayload {
  readonly type: string;
  readonly timestamp: string;
  readonly data: Record<string, unknown>;
}

export interface WebhookServiceOptions {
  /** Where every change is recorded, in the change's own transaction (issue 16). */
  readonly audit: AuditLog;
  /** Allow endpoints on private and loopback addresses (WEBHOOK_ALLOW_PRIVATE_URLS). */
  readonly allowPrivateUrls: boolean;
  /** Told after messages were committed to the outbox, so this instance sends them at once. */
  readonly onEnqueued?: () => void;
  readonly random?: (size: number) => Buffer;
}

/** A message id as Standard Webhooks suggests: a prefix and a unique random part. */
function messageId(random: (size: number) => Buffer): string {
  return `msg_${random(16).toString('base64url')}`;
}

/**
 * An endpoint as the audit log records it: never a secret. Receivers put tokens in the query
 * string (`?token=`) or in the path (Slack's `/services/T…/B…/<token>`, Discord's
 * `/api/webhooks/<id>/<token>`), and the audit log keeps what it is given for good, the old URL
 * of a replaced, leaked one too: so the query is left out and every path segment of
 * AUDIT_SEGMENT_LIMIT characters or more is recorded as `…`. Operators read the URL through the API.
 */
function auditView(endpoint: EndpointWithSecrets): Record<string, unknown> {
  return { endpointId: endpoint.id, url: auditUrl(endpoint.url), description: endpoint.description, enabled: endpoint.enabled, events: endpoint.events };
}

/** A path segment this long is taken for a token (Slack's are 24 characters; ids and words are shorter). */
const AUDIT_SEGMENT_LIMIT = 16;

function auditUrl(url: string): string {
  const at = url.search(/[?#]/);
  const [base = '', rest = ''] = at < 0 ? [url] : [url.slice(0, at), '?…'];
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(base)?.[0] ?? '';
  const path = base
    .slice(origin.length)
    .split('/')
    .map((segment) => (segment.length >= AUDIT_SEGMENT_LIMIT ? '…' : segment))
    .join('/');
  return `${origin}${path}${rest}`;
}

/** Registering endpoints, rotating their secrets, test-sends, and putting events in the outbox. */
export class WebhookService {
  private readonly random: (size: number) => Buffer;

  constructor(
    private readonly storage: Pick<Storage, 'db' | 'transaction' | 'serialize'>,
    private readonly repository: WebhookRepository,
    private readonly clock: Clock,
    private readonly options: WebhookServiceOptions,
    /** Who the audit log names for the changes made through this object (withActor). */
    private readonly actor: Actor = SYSTEM_ACTOR,
  ) {
    this.random = options.random ?? randomBytes;
  }

  /** The same service, recording its changes as made by `actor` (an API user, a console user). */
  withActor(actor: Actor): WebhookService {
    return new WebhookService(this.storage, this.repository, this.clock, this.options, actor);
  }

  /**
   * Records a change of an endpoint in `tx`. An account's endpoint is recorded against the account
   * (its audit trail shows it, as it shows its keys); an operator endpoint against itself.
   */
  private async record(tx: Tx, endpoint: Pick<EndpointWithSecrets, 'id' | 'accountId'>, action: string, change: Pick<AuditEntry, 'before' | 'after'>): Promise<void> {
    let target: Pick<AuditEntry, 'targetKind' | 'target'> = { targetKind: 'webhook-endpoint', target: String(endpoint.id) };
    if (endpoint.accountId !== null) {
      const account = await tx.db.selectFrom('accounts').select('username').where('id', '=', endpoint.accountId).executeTakeFirst();
      if (account) target = { targetKind: 'account', target: account.username };
    }
    await this.options.audit.record(tx, this.actor, { action, ...target, ...change });
  }

  /** Registers an endpoint; the secret in the answer is the only time it is shown. */
  async create(scope: WebhookScope, input: EndpointInput): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const url = this.checkUrl(input.url);
    const events = this.checkEvents(input.events ?? eventTypesFor(scope.accountId), scope.accountId);
    if (scope.accountId !== null && !(await this.storage.db.selectFrom('accounts').select('id').where('id', '=', scope.accountId).executeTakeFirst())) {
      throw new WebhookError('NOT_FOUND', `no account ${scope.accountId}`);
    }
    const existing = await this.repository.endpoints(scope.accountId);
    if (existing.length >= MAX_ENDPOINTS) throw new WebhookError('INVALID', `at most ${MAX_ENDPOINTS} webhook endpoints per account`);
    const now = this.clock.now().toISOString();
    const secret = generateWebhookSecret(this.random);
    const endpoint = await this.storage.transaction(async (tx) => {
      const urls = await this.lockUrls(tx, scope.accountId, url);
      if (urls.length >= MAX_ENDPOINTS) throw new WebhookError('INVALID', `at most ${MAX_ENDPOINTS} webhook endpoints per account`);
      const inserted = await this.repository.insertEndpoint(tx, {
        account_id: scope.accountId,
        url,
        description: input.description ?? '',
        enabled: input.enabled === false ? 0 : 1,
        events: JSON.stringify(events),
        secret,
        previous_secret: null,
        previous_secret_until: null,
        created_by: scope.actor,
        created_at: now,
        updated_at: now,
      });
      await this.record(tx, inserted, 'webhook.create', { after: auditView(inserted) });
      return inserted;
    });
    return { endpoint: publicView(endpoint), secret };
  }

  async list(scope: WebhookScope): Promise<WebhookEndpoint[]> {
    return (await this.repository.endpoints(scope.accountId)).map(publicView);
  }

  async show(scope: WebhookScope, id: number): Promise<WebhookEndpoint> {
    return publicView(await this.owned(scope, id));
  }

  async update(scope: WebhookScope, id: number, changes: Partial<EndpointInput>): Promise<WebhookEndpoint> {
    await this.owned(scope, id);
    const url = changes.url === undefined ? undefined : this.checkUrl(changes.url);
    const events = changes.events === undefined ? undefined : this.checkEvents(changes.events, scope.accountId);
    const updated = await this.storage.transaction(async (tx) => {
      if (url !== undefined) await this.lockUrls(tx, scope.accountId, url, id);
      const before = await this.repository.endpoint(id, tx);
      if (!before) return undefined;
      const after = await this.repository.updateEndpoint(
        tx,
        id,
        {
          ...(url !== undefined ? { url } : {}),
          ...(changes.description !== undefined ? { description: changes.description } : {}),
          ...(changes.enabled !== undefined ? { enabled: changes.enabled ? 1 : 0 } : {}),
          ...(events !== undefined ? { events: JSON.stringify(events) } : {}),
        },
        this.clock.now().toISOString(),
      );
      if (after) await this.record(tx, after, 'webhook.update', changedFields(auditView(before), auditView(after)));
      return after;
    });
    if (!updated) throw notFound(id);
    return publicView(updated);
  }

  async remove(scope: WebhookScope, id: number): Promise<void> {
    const endpoint = await this.owned(scope, id);
    const removed = await this.storage.transaction(async (tx) => {
      if (!(await this.repository.deleteEndpoint(tx, id))) return false;
      await this.record(tx, endpoint, 'webhook.delete', { before: auditView(endpoint) });
      return true;
    });
    if (!removed) throw notFound(id);
  }

  /**
   * Gives the endpoint a new secret. For `graceSeconds` the previous one keeps signing too: each
   * delivery carries both signatures, space-separated (Standard Webhooks "Signature scheme"), so
   * the receiver can switch to the new secret whenever it likes within the grace period.
   */
  async rotateSecret(scope: WebhookScope, id: number, graceSeconds: number): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_ROTATION_GRACE_SECONDS) {
      throw new WebhookError('INVALID', `graceSeconds must be a whole number from 0 to ${MAX_ROTATION_GRACE_SECONDS}`);
    }
    await this.owned(scope, id);
    const now = this.clock.now();
    const secret = generateWebhookSecret(this.random);
    const updated = await this.storage.transaction(async (tx) => {
      // The secret being replaced is read in the transaction, so two rotations at once cannot both
      // keep the same previous secret.
      const current = await this.repository.endpoint(id, tx);
      if (!current) return undefined;
      const rotated = await this.repository.updateEndpoint(
        tx,
        id,
        {
          secret,
          previous_secret: graceSeconds > 0 ? current.secret : null,
          previous_secret_until: graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000).toISOString() : null,
        },
        now.toISOString(),
      );
      // That it happened and how long the old secret still signs: never a secret.
      if (rotated) await this.record(tx, rotated, 'webhook.rotate-secret', { after: { endpointId: id, graceSeconds, previousSecretUntil: rotated.previousSecretUntil } });
      return rotated;
    });
    if (!updated) throw notFound(id);
    return { endpoint: publicView(updated), secret };
  }

  /** Puts a `test` event for this endpoint in the outbox; it is delivered like any other. */
  async sendTest(scope: WebhookScope, id: number): Promise<WebhookMessage> {
    const endpoint = await this.owned(scope, id);
    const now = this.clock.now().toISOString();
    const message: NewMessage = {
      id: messageId(this.random),
      endpointId: endpoint.id,
      accountId: endpoint.accountId,
      eventType: TEST_EVENT,
      payload: JSON.stringify({ type: TEST_EVENT, timestamp: now, data: { endpointId: endpoint.id } } satisfies WebhookPayload),
    };
    await this.storage.transaction(async (tx) => {
      await this.repository.insertMessages(tx, [message], now);
      await this.record(tx, endpoint, 'webhook.test-send', { after: { endpointId: endpoint.id, messageId: message.id } });
    });
    this.options.onEnqueued?.();
    const stored = await this.repository.message(message.id);
    if (!stored) throw new Error(`test message ${message.id} vanished`);
    return stored;
  }

  /**
   * Sends a message of the endpoint again (issue 26 item 15, as Stripe's and Svix's "Resend"): the
   * same id and payload go back in the outbox for one more attempt, freshly signed, and a failure
   * is retried on the schedule from where the message's attempts stand. A message being sent at
   * this moment is refused (INVALID) rather than sent twice at once. Audited like the endpoint's
   * other actions; a disabled endpoint records the attempt as failed, as a test-send does.
   */
  async resend(scope: WebhookScope, id: number, messageId: string): Promise<WebhookMessage> {
    const endpoint = await this.owned(scope, id);
    const now = this.clock.now().toISOString();
    const result = await this.storage.transaction(async (tx) => {
      const requeued = await this.repository.requeue(tx, endpoint.id, messageId, now);
      if (requeued === 'requeued') await this.record(tx, endpoint, 'webhook.resend', { after: { endpointId: endpoint.id, messageId } });
      return requeued;
    });
    // Another endpoint's message answers exactly like a missing one.
    if (result === 'missing') throw new WebhookError('NOT_FOUND', `no message ${messageId} of webhook endpoint ${id}`);
    if (result === 'in-flight') throw new WebhookError('INVALID', `message ${messageId} is being sent right now; resend it once this attempt is logged`);
    this.options.onEnqueued?.();
    const stored = await this.repository.message(messageId);
    if (!stored) throw new WebhookError('NOT_FOUND', `no message ${messageId} of webhook endpoint ${id}`);
    return stored;
  }

  /** The endpoint's delivery log, newest first. */
  async deliveries(scope: WebhookScope, id: number, limit = 100): Promise<WebhookDelivery[]> {
    await this.owned(scope, id);
    return this.repository.deliveries(id, Math.min(Math.max(1, limit), 1000));
  }

  /** The endpoint's messages, newest first. */
  async messages(scope: WebhookScope, id: number, limit = 100): Promise<WebhookMessage[]> {
    await this.owned(scope, id);
    return this.repository.messages(id, Math.min(Math.max(1, limit), 1000));
  }

  /**
   * Puts one event about `accountId` in the outbox, once per subscribed endpoint, inside the
   * caller's transaction (so the event exists exactly when what caused it was committed).
   * Returns how many messages were written; call `enqueued()` after the commit.
   */
  async enqueue(tx: Tx, accountId: number, type: EventType, data: Record<string, unknown>): Promise<number> {
    const endpoints = await this.repository.subscribers(tx, accountId, type);
    const now = this.clock.now().toISOString();
    const payload = JSON.stringify({ type, timestamp: now, data } satisfies WebhookPayload);
    await this.repository.insertMessages(
      tx,
      endpoints.map((e) => ({ id: messageId(this.random), endpointId: e.id, accountId, eventType: type, payload })),
      now,
    );
    return endpoints.length;
  }

  /**
   * Puts one event about the service itself in the outbox, once per enabled operator endpoint of
   * its own that subscribes to it, inside the caller's transaction. Returns how many messages
   * were written; call `enqueued()` after the commit.
   */
  async enqueueOperator(tx: Tx, type: OperatorEventType, data: Record<string, unknown>): Promise<number> {
    const endpoints = await this.repository.operatorSubscribers(tx, type);
    const now = this.clock.now().toISOString();
    const payload = JSON.stringify({ type, timestamp: now, data } satisfies WebhookPayload);
    await this.repository.insertMessages(
      tx,
      endpoints.map((e) => ({ id: messageId(this.random), endpointId: e.id, accountId: null, eventType: type, payload })),
      now,
    );
    return endpoints.length;
  }

  /** Tells the sender that committed messages are waiting. */
  enqueued(): void {
    this.options.onEnqueued?.();
  }

  private async owned(scope: WebhookScope, id: number): Promise<EndpointWithSecrets> {
    const endpoint = await this.repository.endpoint(id);
    // Another account's endpoint answers exactly like a missing one: ids reveal nothing.
    if (!endpoint || endpoint.accountId !== scope.accountId) throw notFound(id);
    return endpoint;
  }

  /** The URL as stored (normaliseWebhookUrl), or INVALID with the reason it cannot be an endpoint. */
  private checkUrl(url: string): string {
    const problem = webhookUrlProblem(url, this.options.allowPrivateUrls);
    if (problem !== undefined) throw new WebhookError('INVALID', problem);
    return normaliseWebhookUrl(url);
  }

  /**
   * In `tx`, after which the scope's endpoint changes run one at a time on every instance
   * (Storage.serialize): the scope's endpoints, refused with ALREADY_EXISTS when one other than
   * `except` already has `url`, so two requests cannot both register one URL (issue 28) or both
   * take the last of MAX_ENDPOINTS places.
   */
  private async lockUrls(tx: Tx, accountId: number | null, url: string, except?: number): Promise<Array<{ id: number; url: string }>> {
    await this.storage.serialize(tx, `webhook-endpoints:${accountId ?? 'operator'}`);
    const urls = await this.repository.urls(tx, accountId);
    if (urls.some((e) => e.url === url && e.id !== except)) throw new WebhookError('ALREADY_EXISTS', `an endpoint with the URL ${url} is already registered`);
    return urls;
  }

  private checkEvents(events: readonly string[], accountId: number | null): string[] {
    const unknown = events.filter((e) => !(EVENT_TYPES as readonly string[]).includes(e));
    if (unknown.length > 0) throw new WebhookError('INVALID', `unknown event type ${unknown.join(', ')}; known: ${EVENT_TYPES.join(', ')}`);
    const allowed = eventTypesFor(accountId);
    const foreign = events.filter((e) => !allowed.includes(e));
    if (foreign.length > 0) throw new WebhookError('INVALID', `${foreign.join(', ')}: only the operator's own endpoints receive events about the service itself`);
    if (events.length === 0) throw new WebhookError('INVALID', 'events must name at least one event type');
    return [...new Set(events)];
  }
}

/** The fields that changed, before and after (with the endpoint's id on both sides). */
function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): Pick<AuditEntry, 'before' | 'after'> {
  const changed = Object.keys(after).filter((key) => key !== 'endpointId' && JSON.stringify(before[key]) !== JSON.stringify(after[key]));
  const pick = (from: Record<string, unknown>): Record<string, unknown> => Object.fromEntries([['endpointId', from.endpointId], ...changed.map((key): [string, unknown] => [key, from[key]])]);
  return { before: pick(before), after: pick(after) };
}

function notFound(id: number): WebhookError {
  return new WebhookError('NOT_FOUND', `no webhook endpoint ${id}`);
}

/** An endpoint without its secrets. */
function publicView(endpoint: EndpointWithSecrets): WebhookEndpoint {
  const { secret: _secret, previousSecret: _previous, ...rest } = endpoint;
  return rest;
}
