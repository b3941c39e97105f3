import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountService } from '../../accounts/account.service.js';
import { AccountError } from '../../accounts/account.service.js';
import type { Alerting } from '../../alerts/alerting.js';
import { CreditAlertError } from '../../alerts/credit-alerts.js';
import { actorOf, requireWrite, type Principal } from '../auth/api-auth.js';
import type { Actor } from '../../audit/audit-log.js';
import { DESCRIPTION, int, MESSAGE_ID, object, str, USERNAME, type Schema } from '../api/api-schemas.js';
import { formErrorOf, type FormError } from './form-errors.js';
import { EVENT_TYPES, MAX_ROTATION_GRACE_SECONDS, WebhookError, type WebhookScope } from '../../webhooks/webhook.service.js';
import { alertsPage, endpointPage, eventField, THRESHOLDS_TEXT_MAX, WEBHOOK_URL_MAX, webhookSecretPage, type AlertsInput, type AlertScopeView, type AlertsTyped } from './alert-pages.js';
import type { Audience, ConsolePageOptions } from './console-context.js';
import { html } from './html.js';
import type { Viewer } from './layout.js';
import { accountPaths } from './operator-pages.js';

/** The services behind the alert pages: the API's own (src/http/api/alerts.routes.ts makes the same calls). */
export interface AlertPagesDeps {
  readonly alerting: Pick<Alerting, 'alerts' | 'webhooks'>;
  readonly accounts: Pick<AccountService, 'show'>;
}

/**
 * Where the plugin is registered, and so whose alerts it serves: a customer's own account (under
 * `/console/account`), any account for operators (`/console/admin/accounts/:username`), or the
 * operator's own endpoints (`/console/admin`).
 */
export type AlertPagesScope = 'own-account' | 'any-account' | 'operator';

export interface AlertPagesOptions extends ConsolePageOptions, AlertPagesDeps {
  readonly scope: AlertPagesScope;
}

/** Whose alerts a request is about, and how its pages name and link them. */
interface Resolved {
  readonly scope: WebhookScope;
  readonly view: AlertScopeView;
}

/** One place the alert pages are served: a customer's own account, one account for operators, the operator's own endpoints. */
interface AlertScope {
  readonly audience: Audience;
  /** Route of the thresholds and endpoints page, below the prefix. */
  readonly page: string;
  /** Route of the endpoints below the prefix (register, and `/:id/...`). */
  readonly endpoints: string;
  /** Path parameters besides the endpoint id. */
  readonly params: Record<string, Schema>;
  /** Thresholds belong to an account; the operator's own endpoints have none. */
  readonly thresholds: boolean;
  resolve(principal: Principal, request: FastifyRequest): Promise<Resolved>;
}

const DONE: Readonly<Record<string, string>> = {
  'thresholds-saved': 'Thresholds saved.',
  'thresholds-reset': 'The server default thresholds apply again.',
  deleted: 'The endpoint is deleted, with its messages and delivery log.',
  enabled: 'The endpoint is enabled.',
  disabled: 'The endpoint is disabled: nothing is sent to it until it is enabled again.',
  'test-sent': 'A test event is queued; the delivery log below follows it.',
  resent: 'The message is queued again; the delivery log below follows its new attempt.',
  'resend-in-flight': 'That message is being sent right now: its attempt shows in the log in a moment, and you can resend it then.',
};

const doneQuery = object({ done: str(32) });
const ID = int(1, 2 ** 31 - 1);

/** "100, 20, 0" as numbers; undefined when it is not a list of whole numbers. */
export function parseThresholds(text: string | undefined): number[] | undefined {
  const parts = (text ?? '').split(/[\s,;]+/).filter((p) => p !== '');
  if (!parts.every((p) => /^\d{1,10}$/.test(p))) return undefined;
  return parts.map(Number);
}

/**
 * Low-credit thresholds and webhook endpoints in the console (issue 18), for a customer's own
 * account, for any account on the operator side, and for the operator's own endpoints. Every
 * change goes through the services the API routes call (CreditAlerts, WebhookService) with the
 * same scope rules: an endpoint of another account answers exactly like a missing one (404).
 */
export const alertPages: FastifyPluginAsync<AlertPagesOptions> = (app, deps) => {
  const { ctx } = deps;
  const { alerts, webhooks } = deps.alerting;

  const scopes: Record<AlertPagesScope, AlertScope> = {
    'own-account': {
      audience: 'customer',
      page: '/alerts',
      endpoints: '/webhooks',
      params: {},
      thresholds: true,
      resolve: (principal) => {
        // The account comes from the session, never from the request.
        if (principal.user.accountId === null) throw new AccountError('NOT_FOUND', 'this user has no account');
        return Promise.resolve({
          scope: { actor: 'account', accountId: principal.user.accountId },
          view: {
            title: 'Alerts and webhooks',
            paths: { page: '/console/account/alerts', endpoints: '/console/account/webhooks' },
            intro: html`These endpoints are told when your account's balance reaches a threshold.`,
            back: { href: '/console/account', label: 'Back to my account' },
          },
        });
      },
    },
    'any-account': {
      audience: 'operator',
      page: '/alerts',
      endpoints: '/webhooks',
      params: { username: USERNAME },
      thresholds: true,
      resolve: async (_principal, request) => {
        const account = await deps.accounts.show((request.params as { username: string }).username);
        const back = accountPaths(account.username).page;
        return {
          scope: { actor: 'operator', accountId: account.id },
          view: {
            title: `Alerts and webhooks of ${account.username}`,
            paths: { page: `${back}/alerts`, endpoints: `${back}/webhooks` },
            intro: html`These endpoints belong to the account <strong>${account.username}</strong> (its users see and change them too) and are told about its balance only.`,
            back: { href: back, label: `Back to ${account.username}` },
          },
        };
      },
    },
    operator: {
      audience: 'operator',
      page: '/webhooks',
      endpoints: '/webhooks',
      params: {},
      thresholds: false,
      resolve: () =>
        Promise.resolve({
          scope: { actor: 'operator', accountId: null },
          view: {
            title: 'Operator webhooks',
            paths: { page: '/console/admin/webhooks', endpoints: '/console/admin/webhooks' },
            intro: html`These endpoints are the operator's own: they are told about <strong>every</strong> account's low-credit alerts. Each account's thresholds and endpoints are on its page.`,
          },
        }),
    },
  };

  const s = scopes[deps.scope];
  // A page without path parameters has no params schema (an empty enum is no schema).
  const params = Object.keys(s.params).length === 0 ? {} : { params: object(s.params, Object.keys(s.params)) };
  const idParams = object({ ...s.params, id: ID }, [...Object.keys(s.params), 'id']);

  /** The signed-in viewer, whose alerts the request is about, and who acts (named in the audit rows). */
  const enter = async (request: FastifyRequest, write: boolean): Promise<{ viewer: Viewer; resolved: Resolved; actor: Actor }> => {
    const { principal, viewer } = await ctx.signIn(request, s.audience);
    if (write) requireWrite(principal);
    return { viewer, resolved: await s.resolve(principal, request), actor: actorOf(principal, request) };
  };

  const overview = async (reply: FastifyReply, viewer: Viewer, resolved: Resolved, extra: Pick<AlertsInput, 'notice' | 'error' | 'typed'>, status = 200) => {
    const { scope, view } = resolved;
    const [thresholds, endpoints] = await Promise.all([s.thresholds && scope.accountId !== null ? alerts.thresholds(scope.accountId) : undefined, webhooks.list(scope)]);
    return ctx.render(reply, alertsPage(viewer, { ...view, thresholds, endpoints, ...extra }), status);
  };
  const accountOf = (resolved: Resolved): number => {
    if (resolved.scope.accountId === null) throw new CreditAlertError('NOT_FOUND', 'alerts belong to an account');
    return resolved.scope.accountId;
  };
  const endpointHref = (resolved: Resolved, id: number) => `${resolved.view.paths.endpoints}/${id}`;

  app.get<{ Querystring: { done?: string } }>(s.page, { schema: { ...params, querystring: doneQuery } }, async (request, reply) => {
    const { viewer, resolved } = await enter(request, false);
    return ctx.passwordFirst(viewer, reply) ?? overview(reply, viewer, resolved, { notice: request.query.done === undefined ? undefined : DONE[request.query.done] });
  });

  if (s.thresholds) {
    app.post<{ Body: { thresholds?: string } }>(`${s.page}/thresholds`, { schema: { ...params, body: ctx.form({ thresholds: str(THRESHOLDS_TEXT_MAX) }) }, attachValidation: true }, async (request, reply) => {
      const { viewer, resolved, actor } = await enter(request, true);
      const typed: AlertsTyped = { thresholds: request.body.thresholds ?? '' };
      const again = (error: FormError) => overview(reply, viewer, resolved, { typed, error }, 400);
      const refused = formErrorOf('thresholds', request.body, request.validationError as FastifyError | undefined);
      if (refused) return again(refused);
      const values = parseThresholds(request.body.thresholds);
      if (values === undefined) return again({ form: 'thresholds', field: 'thresholds', text: 'Thresholds are whole numbers of credits separated by commas, e.g. 100, 20, 0.', values: {} });
      try {
        await alerts.setThresholds(accountOf(resolved), values, actor);
      } catch (error) {
        if (error instanceof CreditAlertError && error.code === 'INVALID') return again({ form: 'thresholds', field: 'thresholds', text: `Not saved: ${error.message}.`, values: {} });
        throw error;
      }
      return reply.redirect(`${resolved.view.paths.page}?done=thresholds-saved`, 303);
    });
    app.post(`${s.page}/thresholds/reset`, { schema: { ...params, body: ctx.form({}) } }, async (request, reply) => {
      const { resolved, actor } = await enter(request, true);
      await alerts.setThresholds(accountOf(resolved), null, actor);
      return reply.redirect(`${resolved.view.paths.page}?done=thresholds-reset`, 303);
    });
  }

  const eventFields = Object.fromEntries(EVENT_TYPES.map((type) => [eventField(type), { type: 'string', enum: ['true'] }]));
  app.post<{ Body: Record<string, string | undefined> }>(
    s.endpoints,
    { schema: { ...params, body: ctx.form({ url: str(WEBHOOK_URL_MAX, { minLength: 1 }), description: DESCRIPTION, ...eventFields }, ['url']) }, attachValidation: true },
    async (request, reply) => {
      const { viewer, resolved, actor } = await enter(request, true);
      const url = request.body.url ?? '';
      const events = EVENT_TYPES.filter((type) => request.body[eventField(type)] === 'true');
      const description = request.body.description;
      const again = (error: FormError) => overview(reply, viewer, resolved, { typed: { url, description, events }, error }, 400);
      // An over-long URL or description comes back at its field, typed values kept (issue 26 item 10).
      const refused = formErrorOf('register', request.body, request.validationError as FastifyError | undefined);
      if (refused) return again(refused);
      let created;
      try {
        created = await webhooks.withActor(actor).create(resolved.scope, { url, description, events });
      } catch (error) {
        if (error instanceof WebhookError && (error.code === 'INVALID' || error.code === 'ALREADY_EXISTS')) {
          // The service checks the URL, then the events, then the count: a refusal naming neither of the latter is the URL's.
          const field = /event|endpoints per account/.test(error.message) ? undefined : 'url';
          return again({ form: 'register', field, text: `Not registered: ${error.message}.`, values: {} });
        }
        throw error;
      }
      const text = `The endpoint ${created.endpoint.url} is registered${created.endpoint.enabled ? ' and enabled' : ''}.`;
      return ctx.render(reply, webhookSecretPage(viewer, { title: 'Endpoint registered', text, secret: created.secret, endpointHref: endpointHref(resolved, created.endpoint.id) }), 201);
    },
  );

  app.get<{ Params: { id: number }; Querystring: { done?: string } }>(`${s.endpoints}/:id`, { schema: { params: idParams, querystring: doneQuery } }, async (request, reply) => {
    const { viewer, resolved } = await enter(request, false);
    if (ctx.passwordFirst(viewer, reply)) return reply;
    const { id } = request.params;
    // Enough attempts for the 50 messages shown, each retried on the schedule and resent a few times.
    const [endpoint, messages, deliveries] = await Promise.all([webhooks.show(resolved.scope, id), webhooks.messages(resolved.scope, id, 50), webhooks.deliveries(resolved.scope, id, 500)]);
    const notice = request.query.done === undefined ? undefined : DONE[request.query.done];
    return ctx.render(reply, endpointPage(viewer, { ...resolved.view, endpoint, messages, deliveries, notice }));
  });

  app.post<{ Params: { id: number }; Body: { enabled: boolean } }>(
    `${s.endpoints}/:id/enabled`,
    { schema: { params: idParams, body: ctx.form({ enabled: { type: 'boolean' } }, ['enabled']) } },
    async (request, reply) => {
      const { resolved, actor } = await enter(request, true);
      await webhooks.withActor(actor).update(resolved.scope, request.params.id, { enabled: request.body.enabled });
      return reply.redirect(`${endpointHref(resolved, request.params.id)}?done=${request.body.enabled ? 'enabled' : 'disabled'}`, 303);
    },
  );

  app.post<{ Params: { id: number }; Body: { graceSeconds: number } }>(
    `${s.endpoints}/:id/rotate`,
    { schema: { params: idParams, body: ctx.form({ graceSeconds: int(0, MAX_ROTATION_GRACE_SECONDS) }, ['graceSeconds']) } },
    async (request, reply) => {
      const { viewer, resolved, actor } = await enter(request, true);
      const { endpoint, secret } = await webhooks.withActor(actor).rotateSecret(resolved.scope, request.params.id, request.body.graceSeconds);
      const text =
        endpoint.previousSecretUntil === null
          ? 'This is the new signing secret; the old one no longer signs.'
          : `This is the new signing secret. Until ${endpoint.previousSecretUntil.slice(0, 16).replace('T', ' ')} UTC each delivery is signed with the old one too, so the receiver can switch over.`;
      return ctx.render(reply, webhookSecretPage(viewer, { title: 'Secret rotated', text, secret, endpointHref: endpointHref(resolved, endpoint.id) }));
    },
  );

  app.post<{ Params: { id: number } }>(`${s.endpoints}/:id/test`, { schema: { params: idParams, body: ctx.form({}) } }, async (request, reply) => {
    const { resolved, actor } = await enter(request, true);
    await webhooks.withActor(actor).sendTest(resolved.scope, request.params.id);
    return reply.redirect(`${endpointHref(resolved, request.params.id)}?done=test-sent`, 303);
  });

  // Resend (issue 26 item 15): the same message again, through the service the API's resend calls.
  const messageParams = object({ ...s.params, id: ID, messageId: MESSAGE_ID }, [...Object.keys(s.params), 'id', 'messageId']);
  app.post<{ Params: { id: number; messageId: string } }>(`${s.endpoints}/:id/messages/:messageId/resend`, { schema: { params: messageParams, body: ctx.form({}) } }, async (request, reply) => {
    const { resolved, actor } = await enter(request, true);
    try {
      await webhooks.withActor(actor).resend(resolved.scope, request.params.id, request.params.messageId);
    } catch (error) {
      if (error instanceof WebhookError && error.code === 'INVALID') return reply.redirect(`${endpointHref(resolved, request.params.id)}?done=resend-in-flight`, 303);
      throw error;
    }
    return reply.redirect(`${endpointHref(resolved, request.params.id)}?done=resent`, 303);
  });

  app.post<{ Params: { id: number } }>(`${s.endpoints}/:id/delete`, { schema: { params: idParams, body: ctx.form({}) } }, async (request, reply) => {
    const { resolved, actor } = await enter(request, true);
    await webhooks.withActor(actor).remove(resolved.scope, request.params.id);
    return reply.redirect(`${resolved.view.paths.page}?done=deleted`, 303);
  });
  return Promise.resolve();
};
