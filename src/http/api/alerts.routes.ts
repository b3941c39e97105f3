import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { DESCRIPTION, MESSAGE_ID, USERNAME, object, str } from './api-schemas.js';
import type { Actor } from '../../audit/audit-log.js';
import { EVENT_TYPES, MAX_ROTATION_GRACE_SECONDS, WebhookError, type WebhookScope } from '../../webhooks/webhook.service.js';
import type { Alerting } from '../../alerts/alerting.js';
import { CreditAlertError, MAX_THRESHOLD, MAX_THRESHOLDS } from '../../alerts/credit-alerts.js';
import { alertAnswers, noContent } from './api-responses.js';

/**
 * The alert and webhook routes of the self-service and admin APIs (issue 16), as Fastify plugins
 * that know nothing of logins: each takes a function that says who the request is for (and
 * throws to refuse it), so the API's own guards plug in where the plugin is registered.
 *
 *   GET|PUT  {base}/alerts                           thresholds (own or server default), fired ones
 *   GET|POST {base}/webhooks                         list, register (the secret is shown once)
 *   GET|PATCH|DELETE {base}/webhooks/:id
 *   POST     {base}/webhooks/:id/rotate-secret       new secret; the old one signs too for graceSeconds
 *   POST     {base}/webhooks/:id/test                a `test` event through the outbox
 *   GET      {base}/webhooks/:id/deliveries          the delivery log, newest first
 *   GET      {base}/webhooks/:id/messages            the outbox rows, newest first
 *   POST     {base}/webhooks/:id/messages/:messageId/resend   the message again, one more attempt
 *
 * The plugins set no error handler: validation failures, the services' errors (WebhookError,
 * CreditAlertError) and the guards' refusals reach the handler of the API they are registered in
 * (installErrorHandling), so they answer in its one shape, `{"error": code, "message", "field"?}`.
 * Bodies refuse unknown fields as every schema of those APIs does (`object`, propertyNames).
 */

const endpointFields = {
  url: str(2048, { minLength: 1 }),
  description: DESCRIPTION,
  enabled: { type: 'boolean' },
  events: { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] }, minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true },
} as const;

const idParams = {
  type: 'object',
  properties: { id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
  required: ['id'],
} as const;

const limitQuery = object({ limit: { type: 'integer', minimum: 1, maximum: 1000 } });

interface IdParams {
  id: number;
}
interface EndpointBody {
  url?: string;
  description?: string;
  enabled?: boolean;
  events?: string[];
}

/** Says whose alerts and endpoints a request may see; throws (an error with a statusCode) to refuse. */
export type ScopeResolver = (request: FastifyRequest) => Promise<WebhookScope>;

export interface AlertRoutesOptions {
  readonly alerting: Pick<Alerting, 'alerts' | 'webhooks'>;
  /** Who the audit log names for a change the request makes (called once the request is authorised). */
  readonly actorOf: (request: FastifyRequest) => Actor;
}

/** For `/account/api`: the account the request is authenticated as. */
export interface AccountAlertRoutesOptions extends AlertRoutesOptions {
  readonly resolveAccountId: (request: FastifyRequest) => Promise<number>;
}

/** For `/admin/api`: an operator, checked by `authorise` (which throws to refuse). */
export interface OperatorAlertRoutesOptions extends AlertRoutesOptions {
  readonly authorise: (request: FastifyRequest, access: 'read' | 'write') => Promise<void>;
  /**
   * The id of the account named in the path (`/accounts/:username/...`, as every operator route
   * names accounts), or undefined when there is none.
   */
  readonly accountIdOf: (username: string) => Promise<number | undefined>;
}

/** `{base}` is the prefix it is registered under, e.g. `/account/api`. */
export const accountAlertsRoutes: FastifyPluginAsync<AccountAlertRoutesOptions> = (app, options) => {
  routes(app, '', options, async (request) => ({ actor: 'account', accountId: await options.resolveAccountId(request) }), true);
  return Promise.resolve();
};

/**
 * `{base}/accounts/:username/...` acts on one account's thresholds and endpoints (the account
 * named as on every other operator route); `{base}/webhooks...` on the operator's own endpoints,
 * told about every account.
 */
export const operatorAlertsRoutes: FastifyPluginAsync<OperatorAlertRoutesOptions> = (app, options) => {
  const access = (request: FastifyRequest): 'read' | 'write' => (request.method === 'GET' ? 'read' : 'write');
  routes(
    app,
    '/accounts/:username',
    options,
    async (request) => {
      await options.authorise(request, access(request));
      const { username } = request.params as { username: string };
      const accountId = await options.accountIdOf(username);
      // The plugin's own NOT_FOUND, as for an unknown endpoint id.
      if (accountId === undefined) throw new WebhookError('NOT_FOUND', `no account named ${username}`);
      return { actor: 'operator', accountId };
    },
    true,
  );
  routes(
    app,
    '',
    options,
    async (request) => {
      await options.authorise(request, access(request));
      return { actor: 'operator', accountId: null };
    },
    false,
  );
  return Promise.resolve();
};

function routes(app: FastifyInstance, base: string, options: AlertRoutesOptions, scopeOf: ScopeResolver, withThresholds: boolean): void {
  const { alerts, webhooks } = options.alerting;
  // Changes are recorded as the caller's (each in its own transaction, by the services).
  const changing = (request: FastifyRequest) => webhooks.withActor(options.actorOf(request));
  // For the OpenAPI document of the API these routes are registered in.
  const tags = [base === '' && withThresholds ? 'account: alerts' : 'admin: alerts'];
  const doc = (summary: string): { tags: string[]; summary: string } => ({ tags, summary });
  const params = (extra: Record<string, unknown>): Record<string, unknown> => {
    const named = base.includes(':username');
    const properties: Record<string, unknown> = { ...(named ? { username: USERNAME } : {}), ...extra };
    return { type: 'object', properties, required: Object.keys(properties) };
  };
  const accountOf = async (request: FastifyRequest): Promise<number> => {
    const scope = await scopeOf(request);
    if (scope.accountId === null) throw new CreditAlertError('NOT_FOUND', 'alerts belong to an account');
    return scope.accountId;
  };

  if (withThresholds) {
    app.get(`${base}/alerts`, { schema: { ...doc("Low-credit thresholds (the account's or the server default) and the ones fired"), params: params({}), response: { 200: alertAnswers.thresholds } } }, async (request) => alerts.thresholds(await accountOf(request)));
    app.put<{ Body: { thresholds: number[] | null } }>(
      `${base}/alerts`,
      {
        schema: { ...doc('Set the low-credit thresholds (null: the server default)'),
          params: params({}),
          body: {
            type: 'object',
            properties: {
              thresholds: {
                type: ['array', 'null'],
                items: { type: 'integer', minimum: 0, maximum: MAX_THRESHOLD },
                maxItems: MAX_THRESHOLDS,
              },
            },
            required: ['thresholds'],
            propertyNames: { enum: ['thresholds'] },
          },
          response: { 200: alertAnswers.thresholds },
        },
      },
      async (request) => alerts.setThresholds(await accountOf(request), request.body.thresholds, options.actorOf(request)),
    );
  }

  app.get(`${base}/webhooks`, { schema: { ...doc('Webhook endpoints'), params: params({}), response: { 200: alertAnswers.endpoints } } }, async (request) => ({ endpoints: await webhooks.list(await scopeOf(request)) }));
  app.post<{ Body: EndpointBody & { url: string } }>(
    `${base}/webhooks`,
    { schema: { ...doc('Register a webhook endpoint: its signing secret is shown this once'), params: params({}), body: object(endpointFields, ['url']), response: { 201: alertAnswers.endpointWithSecret } } },
    async (request, reply) => {
      const scope = await scopeOf(request);
      const created = await changing(request).create(scope, request.body);
      return reply.code(201).send(created);
    },
  );
  app.get<{ Params: IdParams }>(`${base}/webhooks/:id`, { schema: { ...doc('One webhook endpoint'), params: params(idParams.properties), response: { 200: alertAnswers.endpoint } } }, async (request) =>
    webhooks.show(await scopeOf(request), request.params.id),
  );
  app.patch<{ Params: IdParams; Body: EndpointBody }>(
    `${base}/webhooks/:id`,
    { schema: { ...doc("Change a webhook endpoint's URL, description, events or enabled flag"), params: params(idParams.properties), body: { ...object(endpointFields), minProperties: 1 }, response: { 200: alertAnswers.endpoint } } },
    async (request) => {
      const scope = await scopeOf(request);
      return changing(request).update(scope, request.params.id, request.body);
    },
  );
  app.delete<{ Params: IdParams }>(`${base}/webhooks/:id`, { schema: { ...doc('Delete a webhook endpoint'), params: params(idParams.properties), response: { 204: noContent } } }, async (request, reply) => {
    const scope = await scopeOf(request);
    await changing(request).remove(scope, request.params.id);
    return reply.code(204).send();
  });
  app.post<{ Params: IdParams; Body: { graceSeconds?: number } | undefined }>(
    `${base}/webhooks/:id/rotate-secret`,
    {
      schema: { ...doc('Rotate the signing secret: the old one also signs for graceSeconds (default 24 h)'),
        params: params(idParams.properties),
        body: object({ graceSeconds: { type: 'integer', minimum: 0, maximum: MAX_ROTATION_GRACE_SECONDS } }),
        response: { 200: alertAnswers.endpointWithSecret },
      },
    },
    async (request) => {
      const scope = await scopeOf(request);
      return changing(request).rotateSecret(scope, request.params.id, request.body?.graceSeconds ?? 24 * 3600);
    },
  );
  app.post<{ Params: IdParams }>(`${base}/webhooks/:id/test`, { schema: { ...doc('Send a test event through the outbox'), params: params(idParams.properties), response: { 202: alertAnswers.testSent } } }, async (request, reply) => {
    const scope = await scopeOf(request);
    const message = await changing(request).sendTest(scope, request.params.id);
    return reply.code(202).send({ message: { id: message.id, eventType: message.eventType, status: message.status, createdAt: message.createdAt } });
  });
  app.post<{ Params: IdParams & { messageId: string } }>(
    `${base}/webhooks/:id/messages/:messageId/resend`,
    {
      schema: {
        ...doc('Send a message again (the same id and payload, freshly signed): one more attempt through the outbox'),
        params: params({ ...idParams.properties, messageId: MESSAGE_ID }),
        response: { 202: alertAnswers.testSent },
      },
    },
    async (request, reply) => {
      const scope = await scopeOf(request);
      const message = await changing(request).resend(scope, request.params.id, request.params.messageId);
      return reply.code(202).send({ message: { id: message.id, eventType: message.eventType, status: message.status, createdAt: message.createdAt } });
    },
  );
  app.get<{ Params: IdParams; Querystring: { limit?: number } }>(
    `${base}/webhooks/:id/deliveries`,
    { schema: { ...doc("The endpoint's delivery log, newest first"), params: params(idParams.properties), querystring: limitQuery, response: { 200: alertAnswers.deliveries } } },
    async (request) => ({ deliveries: await webhooks.deliveries(await scopeOf(request), request.params.id, request.query.limit) }),
  );
  app.get<{ Params: IdParams; Querystring: { limit?: number } }>(
    `${base}/webhooks/:id/messages`,
    { schema: { ...doc("The endpoint's outbox messages, newest first"), params: params(idParams.properties), querystring: limitQuery, response: { 200: alertAnswers.messages } } },
    async (request) => ({
      messages: (await webhooks.messages(await scopeOf(request), request.params.id, request.query.limit)).map(({ payload, ...m }) => ({ ...m, payload: JSON.parse(payload) as unknown })),
    }),
  );
}
