import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AccountError, MAX_RATE_PER_DAY, MAX_RATE_PER_SECOND, MAX_TOP_UP, type AccountService } from '../../accounts/account.service.js';
import type { AllAccountsUsage } from '../../accounts/all-accounts-usage.js';
import { LedgerQueries } from '../../accounts/ledger-queries.js';
import type { Alerting } from '../../alerts/alerting.js';
import { accountAlertsRoutes, operatorAlertsRoutes } from './alerts.routes.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { Catalogue } from '../../catalogue/catalogue.js';
import { addTestPlate, removeTestPlate, TestPlateError } from '../../datasets/test-plate-changes.js';
import type { ImportJobs } from '../../datasets/import/import-jobs.js';
import type { TestPlates } from '../../datasets/test-plates.js';
import type { LookupStatsRepository } from '../../ops/lookup-stats.repository.js';
import type { ProviderStatus } from '../../providers/upstream/upstream-monitor.js';
import type { SignupConfig } from '../../config.js';
import type { Clock } from '../../shared/clock.js';
import { describeAccount, registerAccountRoutes } from './account.routes.js';
import { importRoutes } from './import.routes.js';
import { actorOf, ApiError, authenticate, checkAccess, clearCookie, installErrorHandling, limitRequests, login, noStoreAnswers, requireWrite, type Principal, type RouteAccess } from '../auth/api-auth.js';
import {
  bool,
  idParams,
  int,
  inviteBody,
  loginBody,
  NAME,
  NOTE,
  object,
  passwordBody,
  REFERENCE,
  str,
  timestamp,
  USERNAME,
  usernameParams,
} from './api-schemas.js';
import type { LoginThrottle, Throttles } from '../../users/login-throttle.js';
import { registerOverviewRoutes } from './overview.routes.js';
import type { OpenApiCollector } from './openapi-document.js';
import { registerDocsPage } from '../site/openapi-docs/openapi-docs-page.js';
import { registerSignupRoute } from './signup.routes.js';
import type { User, UserService } from '../../users/user.service.js';
import { baseUrlOf } from '../base-url.js';

export interface AdminApiOptions {
  readonly accounts: AccountService;
  readonly users: UserService;
  readonly audit: AuditLog;
  readonly db: ConstructorParameters<typeof LedgerQueries>[0];
  readonly clock: Clock;
  /** Usage over every account for the operator overview, one cache for the API and the console (src/accounts/all-accounts-usage.ts). */
  readonly allAccountsUsage: Pick<AllAccountsUsage, 'usage'>;
  /** The login throttle and the per-caller request limit, shared by both APIs and the console (createServices). */
  readonly throttles: Throttles;
  /** Public base URL for invite links; default: from the request. */
  readonly baseUrl?: string | undefined;
  /** Collects both APIs' routes for the OpenAPI document (served by the admin API). */
  readonly openApi: OpenApiCollector;
  /** Low-credit thresholds and webhook endpoints (docs/webhooks.md), served under both APIs. */
  readonly alerting: Pick<Alerting, 'alerts' | 'webhooks'>;
  /** The free test plates (the CLI's `test-plates` commands use the same service). */
  readonly testPlates: Pick<TestPlates, 'add' | 'remove' | 'list'>;
  /** Normalises a test plate's key values as a lookup does. */
  readonly catalogue: Catalogue;
  /** The upstream providers' status, as /readyz shows it. */
  readonly providers: () => Record<string, ProviderStatus>;
  /** Self-service sign-up (SIGNUP_*): `POST /account/api/signup` and `/console/signup`. */
  readonly signup: SignupConfig;
  /** Lookups per hour, interface and outcome over every instance (the store's rollup, migration 0011). */
  readonly lookupStats: LookupStatsRepository;
  /** Uploaded JSON Lines files imported as jobs (the CLI's importer behind them). */
  readonly imports: ImportJobs;
}

const principals = new WeakMap<FastifyRequest, Principal>();

function principalOf(request: FastifyRequest): Principal {
  const principal = principals.get(request);
  if (!principal) throw new ApiError(401, 'unauthorized', 'log in first');
  return principal;
}

function describeUser(user: User): Record<string, unknown> {
  return { id: user.id, name: user.name, role: user.role, account: user.account, active: user.active, mustChangePassword: user.mustChangePassword, disabled: user.disabled, createdAt: user.createdAt };
}

/** Routes every session API has: me, password, logout, logout everywhere, invite acceptance. */
function registerSessionRoutes(app: FastifyInstance, users: UserService, throttle: LoginThrottle, audience: 'operator' | 'customer', tag: string): void {
  app.post<{ Body: { username: string; password: string } }>('/login', { config: { public: true }, schema: { tags: [tag], summary: 'Log in: sets the session cookie, answers the CSRF token', body: loginBody, errorStatuses: [401] } }, async (request, reply) => {
    const { user, csrfToken, expiresAt } = await login(request, reply, users, throttle, audience);
    return { user: describeUser(user), csrfToken, expiresAt };
  });
  app.post<{ Body: { token: string; password: string } }>('/invite/accept', { config: { public: true }, schema: { tags: [tag], summary: 'Set the password from an invite link', body: inviteBody, errorStatuses: [404] } }, async (request) => {
    const user = await users.withActor({ kind: audience, name: 'invitee', address: request.ip }).acceptInvite(request.body.token, request.body.password);
    return { user: describeUser(user) };
  });
  app.get('/me', { schema: { tags: [tag], summary: 'The logged-in user' } }, async (request) => {
    const principal = principalOf(request);
    const session = principal.sessionId === undefined ? undefined : await users.session(principal.sessionId);
    return { user: describeUser(principal.user), via: principal.via, canWrite: principal.canWrite, ...(session ? { csrfToken: session.csrfToken } : {}) };
  });
  app.post('/logout', { config: { ownSession: true }, schema: { tags: [tag], summary: 'End this session' } }, async (request, reply) => {
    const principal = principalOf(request);
    if (principal.sessionId !== undefined) await users.endSession(principal.sessionId);
    clearCookie(request, reply);
    return { loggedOut: true };
  });
  app.post('/logout-everywhere', { config: { ownSession: true }, schema: { tags: [tag], summary: 'End every session of this user, on every instance, at once' } }, async (request, reply) => {
    const principal = principalOf(request);
    const ended = await users.withActor(actorOf(principal, request)).endAllSessions(principal.user);
    clearCookie(request, reply);
    return { sessionsEnded: ended };
  });
  app.post<{ Body: { currentPassword: string; newPassword: string } }>('/me/password', { config: { ownSession: true }, schema: { tags: [tag], summary: 'Change the password (ends the other sessions)', body: passwordBody } }, async (request) => {
    const principal = principalOf(request);
    if (principal.via !== 'session') throw new ApiError(403, 'forbidden', 'log in to change a password');
    await users.withActor(actorOf(principal, request)).changePassword(principal.user, request.body.currentPassword, request.body.newPassword, principal.sessionId);
    return { changed: true };
  });
}

/**
 * Authentication and the access rule (checkAccess) for every route not marked public, before the
 * body is parsed: a caller who may not make a change is refused whatever it sends.
 */
function requireAuth(app: FastifyInstance, users: UserService, audience: 'operator' | 'customer'): void {
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.config as RouteAccess;
    if (request.is404 || route.public === true) return;
    const principal = await authenticate(request, users, audience);
    checkAccess(principal, request.method, route);
    principals.set(request, principal);
  });
}

/**
 * The operators' API under /admin/api (issue 16): accounts, keys, credits, ledger, usage, users,
 * operator tokens and the audit log. Viewers and read tokens read; admins and write tokens change.
 */
export const adminApiPlugin: FastifyPluginAsync<AdminApiOptions> = async (app, options) => {
  const ledger = new LedgerQueries(options.db);
  installErrorHandling(app, '/admin/api');
  noStoreAnswers(app);
  options.openApi.collect(app);
  app.get('/openapi.json', { config: { public: true } }, () => options.openApi.document());
  // The documentation page (the JSON interface's page too, src/http/site/openapi-docs/), public like the document.
  registerDocsPage(app, { title: 'vehicle-lookup admin and account API', documentUrl: '/admin/api/openapi.json', route: '/docs', assetRoute: '/docs', assetUrl: '/admin/api/docs', config: { public: true } });
  limitRequests(app, options.throttles.requests, 'admin');
  requireAuth(app, options.users, 'operator');
  registerSessionRoutes(app, options.users, options.throttles.login, 'operator', 'admin: session');
  const accounts = (request: FastifyRequest) => options.accounts.withActor(actorOf(principalOf(request), request));
  const users = (request: FastifyRequest) => options.users.withActor(actorOf(principalOf(request), request));
  const TAG = 'admin: accounts';

  app.get<{ Querystring: { search?: string; limit?: number; offset?: number } }>(
    '/accounts',
    { schema: { tags: [TAG], summary: 'Accounts by username; ?search= matches part of it', querystring: object({ search: str(64), limit: int(1, 500), offset: int(0, 1_000_000_000) }) } },
    async (request) => {
      const { search, limit = 50, offset = 0 } = request.query;
      const { accounts: found, total } = await options.accounts.list({ search, limit, offset });
      return { accounts: found.map(describeAccount), total, limit, offset };
    },
  );

  app.post<{ Body: { username: string; credits?: number } }>(
    '/accounts',
    { schema: { tags: [TAG], summary: 'Create an account; its first API key is shown this once', successStatus: 201, errorStatuses: [409], body: object({ username: USERNAME, credits: int(0, MAX_TOP_UP) }, ['username']) } },
    async (request, reply) => {
      requireWrite(principalOf(request));
      const { account, apiKey } = await accounts(request).create(request.body.username, request.body.credits ?? 0);
      return reply.code(201).header('cache-control', 'no-store').send({ account: describeAccount(account), apiKey });
    },
  );

  const named = async (request: FastifyRequest) => options.accounts.show((request.params as { username: string }).username);

  app.get('/accounts/:username', { schema: { tags: [TAG], summary: 'One account', params: usernameParams } }, async (request) => describeAccount(await named(request)));

  app.patch<{ Params: { username: string }; Body: { disabled?: boolean; requireApiKey?: boolean; rateLimits?: { perSecond?: number | null; perDay?: number | null } } }>(
    '/accounts/:username',
    {
      schema: {
        tags: [TAG],
        summary: 'Disable or enable, require the API key on every binding, set rate limits (null: server default, 0: none)',
        params: usernameParams,
        body: object({
          disabled: bool,
          requireApiKey: bool,
          rateLimits: object({ perSecond: { type: ['integer', 'null'], minimum: 0, maximum: MAX_RATE_PER_SECOND }, perDay: { type: ['integer', 'null'], minimum: 0, maximum: MAX_RATE_PER_DAY } }),
        }),
      },
    },
    async (request) => {
      requireWrite(principalOf(request));
      const service = accounts(request);
      const { username } = request.params;
      const { disabled, requireApiKey, rateLimits } = request.body;
      let account = await service.show(username);
      if (disabled !== undefined) account = await service.setDisabled(username, disabled);
      if (requireApiKey !== undefined) account = await service.setRequireApiKey(username, requireApiKey);
      if (rateLimits !== undefined) account = await service.setRateLimits(username, rateLimits);
      return describeAccount(account);
    },
  );

  app.delete<{ Params: { username: string } }>('/accounts/:username', { schema: { tags: [TAG], summary: 'Delete an account without ledger rows; close one with a ledger', params: usernameParams } }, async (request) => {
    requireWrite(principalOf(request));
    return { username: request.params.username, outcome: await accounts(request).deleteOrClose(request.params.username, ledger) };
  });

  app.post<{ Params: { username: string }; Body: { operation: 'grant' | 'remove'; amount: number; reference?: string; note?: string } }>(
    '/accounts/:username/credits',
    {
      schema: {
        tags: [TAG],
        summary:
          'Grant or remove credits: one ledger row with the reference and note (409 when removing more than the balance). A change repeated with the reference of an earlier one moves nothing and answers that one (Idempotent-Replayed: true); 409 when its amount differs',
        errorStatuses: [409],
        params: usernameParams,
        body: object({ operation: { type: 'string', enum: ['grant', 'remove'] }, amount: int(1, MAX_TOP_UP), reference: REFERENCE, note: NOTE }, ['operation', 'amount']),
      },
    },
    async (request, reply) => {
      requireWrite(principalOf(request));
      const { operation, ...fields } = request.body;
      const change = { account: request.params.username, ...fields };
      const service = accounts(request);
      const { credits, replayed } = operation === 'grant' ? await service.grantCredits(change) : await service.removeCredits(change);
      // A repeated reference answers the first change's result, marked as the lookup API marks replays.
      if (replayed) void reply.header('idempotent-replayed', 'true');
      return { username: request.params.username, credits };
    },
  );

  registerAccountRoutes(app, { accounts: options.accounts, ledger, principal: principalOf, account: named, base: '/accounts/:username', params: true, tag: TAG });

  app.get<{ Params: { username: string } }>('/accounts/:username/users', { schema: { tags: [TAG], summary: "The account's customer users", params: usernameParams } }, async (request) => {
    const account = await named(request);
    return { users: (await options.users.list(account.id)).map(describeUser) };
  });

  app.post<{ Params: { username: string }; Body: { name: string; role: 'owner' | 'member' } }>(
    '/accounts/:username/users',
    { schema: { tags: [TAG], summary: 'Invite a customer user: answers the one-time invite link', successStatus: 201, errorStatuses: [409], params: usernameParams, body: object({ name: USERNAME, role: { type: 'string', enum: ['owner', 'member'] } }, ['name', 'role']) } },
    async (request, reply) => {
      requireWrite(principalOf(request));
      const { user, inviteToken } = await users(request).createCustomer(request.params.username, request.body.name, request.body.role);
      const inviteUrl = `${baseUrlOf(request, options.baseUrl)}/account/invite#${inviteToken}`;
      return reply.code(201).header('cache-control', 'no-store').send({ user: describeUser(user), inviteToken, inviteUrl });
    },
  );

  const OPS = 'admin: operators';
  app.get('/operators', { schema: { tags: [OPS], summary: 'Operator users' } }, async () => ({ users: (await options.users.list(null)).map(describeUser) }));

  app.get('/tokens', { schema: { tags: [OPS], summary: 'Operator API tokens (never their secrets)' } }, async () => ({ tokens: await options.users.tokens() }));

  app.post<{ Body: { name: string; scope: 'read' | 'write' } }>(
    '/tokens',
    { schema: { tags: [OPS], summary: 'Create an operator API token (Authorization: Bearer); shown this once', successStatus: 201, body: object({ name: NAME, scope: { type: 'string', enum: ['read', 'write'] } }, ['name', 'scope']) } },
    async (request, reply) => {
      const principal = principalOf(request);
      requireWrite(principal);
      if (principal.via !== 'session') throw new ApiError(403, 'forbidden', 'tokens are created by a logged-in admin, not by another token');
      const { token, secret } = await users(request).createToken(principal.user, request.body.name, request.body.scope);
      return reply.code(201).header('cache-control', 'no-store').send({ token, secret });
    },
  );

  app.post<{ Params: { id: number } }>('/tokens/:id/revoke', { schema: { tags: [OPS], summary: 'Revoke an operator token at once', params: idParams } }, async (request) => {
    requireWrite(principalOf(request));
    return { token: await users(request).revokeToken(request.params.id) };
  });

  app.get<{ Querystring: { actor?: string; action?: string; targetKind?: string; target?: string; from?: string; to?: string; before?: number; limit?: number } }>(
    '/audit',
    {
      schema: {
        tags: ['admin: audit'],
        summary: 'The audit log, newest first; page with ?before=<last id>',
        querystring: object({ actor: str(200), action: str(64), targetKind: str(32), target: str(200), from: timestamp, to: timestamp, before: int(1, Number.MAX_SAFE_INTEGER), limit: int(1, 500) }),
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 100;
      const rows = await options.audit.list({ ...request.query, limit });
      const last = rows.at(-1);
      return { rows, next: rows.length === limit && last ? last.id : null };
    },
  );

  app.get('/providers', { schema: { tags: ['admin: operations'], summary: "The upstream providers' status, as /readyz shows it" } }, () => ({ providers: options.providers() }));
  registerOverviewRoutes(app, { usage: options.allAccountsUsage, lookupStats: options.lookupStats });

  const plateBody = object({ operation: str(64), values: { type: 'array', items: str(64, { minLength: 1 }), minItems: 1, maxItems: 4 } }, ['operation', 'values']);
  // The console changes test plates through the same function (src/datasets/test-plate-changes.ts).
  const plateChange = async (request: FastifyRequest, change: typeof addTestPlate, body: { operation: string; values: string[] }) => {
    requireWrite(principalOf(request));
    try {
      return await change(options, actorOf(principalOf(request), request), body.operation, body.values);
    } catch (error) {
      // An invalid key names its field; every other code answers as the domain table says.
      if (error instanceof TestPlateError && error.code === 'INVALID') throw new ApiError(400, 'invalid-request', `body: ${error.message}`, 'values');
      throw error;
    }
  };
  app.get('/test-plates', { schema: { tags: ['admin: operations'], summary: 'The free test plates: they answer and cost no credit' } }, async () => ({
    plates: (await options.testPlates.list()).map((p) => ({ operation: p.operation, key: p.lookupKey })),
  }));
  app.post<{ Body: { operation: string; values: string[] } }>(
    '/test-plates',
    { schema: { tags: ['admin: operations'], summary: 'Make a plate free: its key values in parameter order, normalised as a lookup does', successStatus: 201, body: plateBody } },
    async (request, reply) => reply.code(201).send(await plateChange(request, addTestPlate, request.body)),
  );
  app.delete<{ Body: { operation: string; values: string[] } }>(
    '/test-plates',
    { schema: { tags: ['admin: operations'], summary: 'Make a test plate cost credits again', body: plateBody } },
    async (request) => ({ ...(await plateChange(request, removeTestPlate, request.body)), removed: true }),
  );

  // Registered inside this scope, so the login, CSRF and rate-limit hooks above guard them too;
  // viewers and read tokens read, admins and write tokens change.
  await app.register(importRoutes, { imports: options.imports, principal: principalOf });
  await app.register(operatorAlertsRoutes, {
    alerting: options.alerting,
    actorOf: (request) => actorOf(principalOf(request), request),
    accountIdOf: async (username) => {
      try {
        return (await options.accounts.show(username)).id;
      } catch (error) {
        if (error instanceof AccountError && error.code === 'NOT_FOUND') return undefined;
        throw error;
      }
    },
    authorise: (request, access) => {
      const principal = principalOf(request);
      if (access === 'write') requireWrite(principal);
      return Promise.resolve();
    },
  });
};

/** The customers' API under /account/api: their own account only (it comes from the session). */
export const accountApiPlugin: FastifyPluginAsync<AdminApiOptions> = async (app, options) => {
  const ledger = new LedgerQueries(options.db);
  installErrorHandling(app, '/account/api');
  noStoreAnswers(app);
  options.openApi.collect(app);
  limitRequests(app, options.throttles.requests, 'account');
  requireAuth(app, options.users, 'customer');
  registerSessionRoutes(app, options.users, options.throttles.login, 'customer', 'account: session');
  registerSignupRoute(app, { users: options.users, signup: options.signup, describeUser });
  const own = async (request: FastifyRequest) => {
    const { user } = principalOf(request);
    if (user.account === null) throw new AccountError('NOT_FOUND', 'this user has no account');
    return options.accounts.show(user.account);
  };
  app.get('/account', { schema: { tags: ['account'], summary: 'The account of the logged-in user' } }, async (request) => describeAccount(await own(request)));
  registerAccountRoutes(app, { accounts: options.accounts, ledger, principal: principalOf, account: own, base: '', params: false, tag: 'account' });
  // The account comes from the session, never the path; members only read, as on the routes above.
  await app.register(accountAlertsRoutes, {
    alerting: options.alerting,
    actorOf: (request) => actorOf(principalOf(request), request),
    resolveAccountId: (request) => {
      const principal = principalOf(request);
      if (request.method !== 'GET') requireWrite(principal);
      if (principal.user.accountId === null) throw new AccountError('NOT_FOUND', 'this user has no account');
      return Promise.resolve(principal.user.accountId);
    },
  });
};
