import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AccountError, MAX_RATE_PER_DAY, MAX_RATE_PER_SECOND, MAX_TOP_UP, type AccountService } from '../../accounts/account.service.js';
import type { Account } from '../../accounts/account.js';
import type { AllAccountsUsage } from '../../accounts/all-accounts-usage.js';
import { freeReasonWords, LEDGER_ROW_TYPES, LedgerFilterError, LedgerQueries, ledgerKinds, type LedgerRowType } from '../../accounts/ledger-queries.js';
import { actorOf, ApiError, domainError, authenticate, clearCookie, CSRF_HEADER, limitRequests, login, readCookie, requireWrite, SESSION_COOKIE, type Principal } from '../auth/api-auth.js';
import { int, NAME, NOTE, object, PASSWORD, REFERENCE, str, USERNAME } from '../api/api-schemas.js';
import type { Throttles } from '../../users/login-throttle.js';
import { UserError, type UserService } from '../../users/user.service.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { ImportJobs } from '../../datasets/import/import-jobs.js';
import type { Clock } from '../../shared/clock.js';
import { baseUrlOf } from '../base-url.js';
import type { AccountView } from './account-sections.js';
import { secretShown } from './account-sections.js';
import { errorPage, invitePage, loginPage, passwordPage } from './auth-pages.js';
import { importConsoleRoutes } from './import.routes.js';
import { ASSETS, VERSION } from './console-assets.js';
import { INVITE_FORM, LOGIN_FORM } from '../auth/form-token.js';
import { customerPage } from './customer-pages.js';
import { frontPage, type ServiceLink } from '../site/front-page.js';
import { html } from './html.js';
import { CSRF_FIELD, page, type Viewer } from './layout.js';
import { accountCreatedPage, accountPaths, accountsPage, auditPage, inviteCreatedPage, operatorAccountPage } from './operator-pages.js';
import { registerOverviewRoute } from './overview.routes.js';
import { securePage } from '../security-headers.js';
import { welcomeNotice } from './signup-pages.js';
import { registerSignupPages } from './signup.routes.js';
import type { SignupConfig } from '../../config.js';
import { TRY_IT_PATH, tryItPage, type TryItOutcome } from './try-it-page.js';
import { Catalogue } from '../../catalogue/catalogue.js';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import { LookupError } from '../../lookup/lookup-error.js';
import type { LookupPipeline } from '../../lookup/lookup-pipeline.js';
import { jsonBodyOf } from '../../results/index.js';
import { writeHttpResult } from '../lookup/asmx-http/asmx-http.plugin.js';
import type { LookupStatsRepository } from '../../ops/lookup-stats.repository.js';
import type { ProviderStatus } from '../../providers/upstream/upstream-monitor.js';
import { daysBetween } from './usage-chart.js';
import { registerAlertPages, type AlertPagesDeps } from './alert.routes.js';
import type { Audience, ConsoleContext } from './console-context.js';
import { registerSessionPages } from './session.routes.js';
import { registerTestPlatePages, type TestPlatePagesDeps } from './test-plate.routes.js';
import { registerTokenPages } from './token.routes.js';

export interface ConsoleOptions {
  readonly accounts: AccountService;
  readonly users: UserService;
  readonly audit: AuditLog;
  readonly db: ConstructorParameters<typeof LedgerQueries>[0];
  readonly clock: Clock;
  /** Usage over every account for the operator overview, shared with the admin API's /usage. */
  readonly allAccountsUsage: Pick<AllAccountsUsage, 'usage'>;
  /** BASE_URL when configured (links shown on pages); otherwise from the request. */
  readonly baseUrl?: string | undefined;
  /** The SOAP services the front page links to. */
  readonly services: readonly ServiceLink[];
  /** The login throttle and per-caller request limit, shared with the APIs (createServices). */
  readonly throttles: Throttles;
  /** The customer's "Try it" page: the operations, the lookup pipeline and each operation's XML namespace. */
  readonly lookups: { readonly catalogue: Catalogue; readonly pipeline: LookupPipeline; readonly namespaceOf: (op: OperationDeclaration) => string };
  /** Upstream providers' state as /readyz reports it (metrics.upstream.snapshot), for the operator overview. */
  readonly upstream: () => Record<string, ProviderStatus>;
  /** Low-credit thresholds and webhook endpoints (the API's services). */
  readonly alerting: AlertPagesDeps['alerting'];
  /** The free test plates (the admin API's service). */
  readonly testPlates: TestPlatePagesDeps['testPlates'];
  /** Self-service sign-up (SIGNUP_*): its page, and the links to it while it is on. */
  readonly signup: SignupConfig;
  /** Lookups per hour, interface and outcome over every instance, for the operator overview. */
  readonly lookupStats: LookupStatsRepository;
  /** Import jobs, for the Imports pages (src/http/console/import.routes.ts). */
  readonly imports: ImportJobs;
}

/** Forms post at most this much (the largest form is a few hundred bytes). */
const FORM_BODY_LIMIT = 16 * 1024;
const USAGE_DAYS = 30;
const EMPTY_MEANS_DEFAULT = new Set(['perSecond', 'perDay']);
const LEDGER_PAGE = 50;

type Form = Record<string, string>;

/** Page size and paging of lists the console shows. */
const listQuery = object({ search: str(64), offset: int(0, 1_000_000_000) });
const auditQuery = object({ actor: str(200), action: str(64), target: str(200), before: int(1, Number.MAX_SAFE_INTEGER) });
/** Every form schema allows the CSRF field besides its own. */
const form = (properties: Record<string, Record<string, unknown>>, required: readonly string[] = []) => object({ ...properties, [CSRF_FIELD]: str(100) }, required);
const usernameParams = object({ username: USERNAME }, ['username']);
const keyIdParams = object({ id: int(1, 2 ** 31 - 1) }, ['id']);
const accountKeyParams = object({ username: USERNAME, id: int(1, 2 ** 31 - 1) }, ['username', 'id']);
const nullableRate = (max: number) => ({ anyOf: [{ type: 'integer', minimum: 0, maximum: max }, { type: 'string', maxLength: 0 }] });

/** The console's ledger filters (account pages' query string). */
type LedgerQs = { operation?: string; type?: LedgerRowType; charged?: boolean; before?: number };

/** What an error means to a person, and its status (the API's own mapping). */
function describeError(error: FastifyError): { status: number; text: string } {
  if (error.validation) {
    const first = error.validation[0];
    const params = (first?.params ?? {}) as { missingProperty?: unknown; propertyName?: unknown };
    const named = typeof params.missingProperty === 'string' ? params.missingProperty : typeof params.propertyName === 'string' ? params.propertyName : undefined;
    const field = (first?.instancePath ?? '').replace(/^\//, '') || named || (error.validationContext ?? 'input');
    return { status: 400, text: `The field “${field}” ${first?.message ?? 'is invalid'}.` };
  }
  if (error instanceof ApiError) return { status: error.status, text: error.message };
  if (error instanceof LedgerFilterError) return { status: 400, text: `The ledger filter: ${error.message}.` };
  // The services' errors answer with the API's statuses (one table: src/http/auth/api-auth.ts).
  const domain = domainError(error);
  if (domain) return { status: domain.status, text: error.message };
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  return { status, text: status === 500 ? 'Internal error.' : error.message };
}

/**
 * The web console and the front page (issue 18): server-rendered HTML over the same services,
 * authentication, CSRF tokens and roles as the admin and account API (src/http/api/). The console
 * decides nothing itself: a viewer's buttons are hidden, and requireWrite refuses the write anyway.
 */
export const consolePlugin: FastifyPluginAsync<ConsoleOptions> = (app, options) => {
  const ledger = new LedgerQueries(options.db);
  const viewers = new WeakMap<FastifyRequest, { principal: Principal; viewer: Viewer }>();

  // HTML forms post application/x-www-form-urlencoded; only console routes parse it (this scope).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  // An empty form or query field means "not given" (a blank filter, no reference); only the rate
  // limits keep theirs, where empty means "the server default" (null).
  app.addHook('preValidation', (request, _reply, done) => {
    for (const source of [request.query, request.body]) {
      if (source !== null && typeof source === 'object') {
        for (const [k, v] of Object.entries(source as Record<string, unknown>)) if (v === '' && !EMPTY_MEANS_DEFAULT.has(k)) Reflect.deleteProperty(source, k);
      }
    }
    done();
  });
  // The same per-caller budget as the API (session, else address): pages read several tables.
  limitRequests(app, options.throttles.requests, 'console');
  app.addHook('onSend', (request, reply, payload, done) => {
    securePage(request, reply, { cache: request.url === '/' ? 'public' : 'private' });
    done(null, payload);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { status, text } = describeError(error);
    if (status === 500) request.log.error({ err: error }, 'console request failed');
    if (status === 401 && request.method === 'GET') return reply.redirect('/console/login', 303);
    if (error instanceof ApiError && error.retryAfter !== undefined) void reply.header('retry-after', String(error.retryAfter));
    return reply.code(status).type('text/html; charset=utf-8').send(errorPage(status, status === 500 ? `Internal error; quote request id ${request.id} to the operator.` : text, viewers.get(request)?.viewer));
  });

  /**
   * The session's user, through the API's own authenticate(): the same session lookup, role and
   * CSRF check. A form cannot send a header, so the form's CSRF field is presented as the header.
   */
  async function signIn(request: FastifyRequest, audience: Audience): Promise<{ principal: Principal; viewer: Viewer }> {
    const sessionId = readCookie(request, SESSION_COOKIE);
    if (sessionId === undefined) throw new ApiError(401, 'unauthorized', 'Log in first.');
    const fields = request.body as Form | undefined;
    if (request.method === 'POST') {
      Reflect.deleteProperty(request.headers, CSRF_HEADER);
      const presented = fields?.[CSRF_FIELD];
      if (presented !== undefined) request.headers[CSRF_HEADER] = presented;
    }
    // The console is cookie-only: an Authorization header is not a console login.
    delete request.headers.authorization;
    const principal = await authenticate(request, options.users, audience);
    const session = await options.users.session(sessionId);
    if (!session) throw new ApiError(401, 'unauthorized', 'Log in first.');
    const signedIn = { principal, viewer: { user: principal.user, csrf: session.csrfToken, canWrite: principal.canWrite } };
    viewers.set(request, signedIn);
    return signedIn;
  }

  const html200 = (reply: FastifyReply, body: string, status = 200) => reply.code(status).type('text/html; charset=utf-8').send(body);
  const actorService = (principal: Principal, request: FastifyRequest) => options.accounts.withActor(actorOf(principal, request));

  async function accountView(account: Account, query: LedgerQs): Promise<AccountView> {
    // The last USAGE_DAYS whole UTC days, today included.
    const now = options.clock.now();
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const from = new Date(today - (USAGE_DAYS - 1) * 86_400_000);
    const to = new Date(today + 86_400_000);
    const days = daysBetween(from, to);
    const kinds = ledgerKinds(query.type, query.charged);
    // An older link's charged=true is type=charged; charged=false (every row but charged lookups) has no type and stays.
    const filter = query.charged === true ? { operation: query.operation, type: 'charged' as const } : { operation: query.operation, type: query.type, charged: query.charged };
    const [usage, rows, keys] = await Promise.all([
      ledger.usage(account.id, from.toISOString(), to.toISOString()),
      ledger.rows(account.id, { operation: query.operation, kinds, before: query.before, limit: LEDGER_PAGE }),
      options.accounts.listKeys(account.username),
    ]);
    const last = rows.at(-1);
    return { account, keys, ledger: rows, nextBefore: rows.length === LEDGER_PAGE && last ? last.id : null, usage, days, filter };
  }

  // ---- public: front page, assets, login, invite ----

  app.get('/', (request, reply) => html200(reply, frontPage({ version: VERSION, baseUrl: baseUrlOf(request, options.baseUrl), services: options.services, signupEnabled: options.signup.enabled })));

  for (const asset of Object.values(ASSETS)) {
    app.get(asset.path, (_request, reply) => reply.type(asset.type).header('cache-control', 'public, max-age=31536000, immutable').send(asset.body));
  }

  app.get('/console', async (request, reply) => {
    const sessionId = readCookie(request, SESSION_COOKIE);
    const session = sessionId === undefined ? undefined : await options.users.session(sessionId);
    if (!session) return reply.redirect('/console/login', 303);
    return reply.redirect(session.user.accountId === null ? '/console/admin' : '/console/account', 303);
  });

  app.get<{ Querystring: { accepted?: string; ended?: string } }>('/console/login', { schema: { querystring: object({ accepted: str(1), ended: str(1) }) } }, (request, reply) =>
    html200(reply, loginPage({ formToken: LOGIN_FORM.issue(request, reply), signup: options.signup.enabled, ...(request.query.accepted ? { notice: 'Your password is set. Log in with it.' } : request.query.ended ? { notice: 'Every session of yours has ended, on every device.' } : {}) })),
  );

  app.post<{ Body: { username: string; password: string; [CSRF_FIELD]?: string } }>('/console/login', { schema: { body: form({ username: str(200), password: PASSWORD }, ['username', 'password']) } }, async (request, reply) => {
    // Refused before the password is looked at: a forged login counts against no throttle either.
    const formToken = LOGIN_FORM.check(request, request.body[CSRF_FIELD]);
    // Operators and customers share the login page; the user's kind picks the audience.
    const known = await options.users.findByName(request.body.username);
    const audience: Audience = known?.accountId === null ? 'operator' : 'customer';
    let user;
    try {
      ({ user } = await login(request, reply, options.users, options.throttles.login, audience));
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return html200(reply, loginPage({ formToken, error: 'Wrong user name or password.', username: request.body.username, signup: options.signup.enabled }), 401);
      throw error;
    }
    void reply.header('set-cookie', LOGIN_FORM.cleared(request));
    return reply.redirect(user.mustChangePassword ? '/console/password' : user.accountId === null ? '/console/admin' : '/console/account', 303);
  });

  app.post('/console/logout', { schema: { body: form({}) } }, async (request, reply) => {
    const sessionId = readCookie(request, SESSION_COOKIE);
    const session = sessionId === undefined ? undefined : await options.users.session(sessionId);
    if (session && sessionId !== undefined) {
      await signIn(request, session.user.accountId === null ? 'operator' : 'customer');
      await options.users.endSession(sessionId);
    }
    clearCookie(request, reply);
    return reply.redirect('/console/login', 303);
  });

  app.get('/console/password', async (request, reply) => {
    const sessionId = readCookie(request, SESSION_COOKIE);
    const session = sessionId === undefined ? undefined : await options.users.session(sessionId);
    if (!session) return reply.redirect('/console/login', 303);
    const { viewer } = await signIn(request, session.user.accountId === null ? 'operator' : 'customer');
    return html200(reply, passwordPage(viewer, { required: viewer.user.mustChangePassword }));
  });

  app.post<{ Body: { currentPassword: string; newPassword: string } }>(
    '/console/password',
    { schema: { body: form({ currentPassword: PASSWORD, newPassword: PASSWORD }, ['currentPassword', 'newPassword']) } },
    async (request, reply) => {
      const sessionId = readCookie(request, SESSION_COOKIE);
      const session = sessionId === undefined ? undefined : await options.users.session(sessionId);
      if (!session) return reply.redirect('/console/login', 303);
      const { principal, viewer } = await signIn(request, session.user.accountId === null ? 'operator' : 'customer');
      try {
        await options.users.withActor(actorOf(principal, request)).changePassword(principal.user, request.body.currentPassword, request.body.newPassword, principal.sessionId);
      } catch (error) {
        if (error instanceof UserError) return html200(reply, passwordPage(viewer, { required: viewer.user.mustChangePassword, error: error.message }), 400);
        throw error;
      }
      return reply.redirect('/console', 303);
    },
  );

  // The admin API's invite links point at /account/invite#TOKEN; operators' at /console/invite#TOKEN.
  for (const path of ['/account/invite', '/console/invite']) app.get(path, (request, reply) => html200(reply, invitePage({ formToken: INVITE_FORM.issue(request, reply) })));

  app.post<{ Body: { token: string; password: string; [CSRF_FIELD]?: string } }>('/console/invite', { schema: { body: form({ token: str(100, { minLength: 1 }), password: PASSWORD }, ['token', 'password']) } }, async (request, reply) => {
    const formToken = INVITE_FORM.check(request, request.body[CSRF_FIELD]);
    try {
      await options.users.withActor({ kind: 'customer', name: 'invitee', address: request.ip }).acceptInvite(request.body.token, request.body.password);
    } catch (error) {
      if (error instanceof UserError) return html200(reply, invitePage({ formToken, error: error.message, token: request.body.token }), error.code === 'NOT_FOUND' ? 404 : 400);
      throw error;
    }
    void reply.header('set-cookie', INVITE_FORM.cleared(request));
    return reply.redirect('/console/login?accepted=1', 303);
  });

  registerSignupPages(app, { users: options.users, signup: options.signup, render: html200 });

  // ---- customers ----

  // `charged` is the older form of `type` (links from before free lookups had rows still work).
  const ledgerQs = object({ operation: str(64), type: { type: 'string', enum: [...LEDGER_ROW_TYPES] }, charged: { type: 'boolean' }, before: int(1, Number.MAX_SAFE_INTEGER) });

  const ownAccount = async (principal: Principal): Promise<Account> => {
    if (principal.user.account === null) throw new AccountError('NOT_FOUND', 'this user has no account');
    return options.accounts.show(principal.user.account);
  };

  const passwordFirst = (viewer: Viewer, reply: FastifyReply) => (viewer.user.mustChangePassword ? reply.redirect('/console/password', 303) : undefined);

  app.get<{ Querystring: LedgerQs & { welcome?: string } }>(
    '/console/account',
    { schema: { querystring: object({ ...(ledgerQs.properties as Record<string, Record<string, unknown>>), welcome: str(1) }) } },
    async (request, reply) => {
      const { principal, viewer } = await signIn(request, 'customer');
      const { welcome, ...query } = request.query;
      const account = await ownAccount(principal);
      return passwordFirst(viewer, reply) ?? html200(reply, customerPage(viewer, await accountView(account, query), welcome === undefined ? undefined : welcomeNotice(account)));
    },
  );

  // ---- customers: Try it ----

  const { catalogue, pipeline, namespaceOf } = options.lookups;
  const firstOperation = catalogue.operations[0];
  const chosen = (name: string | undefined): OperationDeclaration => {
    const op = name === undefined ? firstOperation : catalogue.find(name);
    if (!op) throw new ApiError(400, 'bad_request', `Unknown operation ${name ?? ''}.`);
    return op;
  };

  app.get<{ Querystring: { operation?: string } }>(TRY_IT_PATH, { schema: { querystring: object({ operation: str(64) }) } }, async (request, reply) => {
    const { viewer } = await signIn(request, 'customer');
    return passwordFirst(viewer, reply) ?? html200(reply, tryItPage(viewer, { operations: catalogue.operations, operation: chosen(request.query.operation), values: {} }));
  });

  // Parameter fields are named after the operation's parameters (any of the catalogue's), so the body is open: strings only, short.
  const tryItBody = { type: 'object', properties: { operation: str(64), [CSRF_FIELD]: str(100) }, required: ['operation'], additionalProperties: str(200) };
  app.post<{ Body: Form }>(TRY_IT_PATH, { schema: { body: tryItBody } }, async (request, reply) => {
    // A member may run it: it reads data and spends credits exactly as the account's API keys do,
    // which every user of the account may hold; no account setting changes.
    const { principal, viewer } = await signIn(request, 'customer');
    const account = await ownAccount(principal);
    const operation = chosen(request.body.operation);
    const values: Record<string, string> = {};
    for (const parameter of Catalogue.inputParameters(operation)) {
      const value = request.body[parameter.name];
      if (value !== undefined) values[parameter.name] = value;
    }
    let outcome: TryItOutcome;
    try {
      // The session authenticated a user of this account (cookie, CSRF token, role above), so the
      // pipeline is told who it is instead of being shown a key the console never holds.
      const done = await pipeline.execute({
        call: { operation, args: { ...values, username: account.username } },
        auth: { mode: 'session', username: account.username },
        interface: 'console',
        requestId: request.id,
        baseUrl: baseUrlOf(request, options.baseUrl),
      });
      outcome = {
        ok: true,
        json: JSON.stringify(jsonBodyOf(done.result), null, 2),
        xml: writeHttpResult(done.result, namespaceOf(operation)),
        charged: done.charged,
        balance: done.balance,
        // The reason the pipeline gave the lookup's free ledger row (an account's lookup that cost nothing always has one).
        free: done.charged === 0 ? freeReasonWords(done.free) : null,
      };
    } catch (error) {
      if (!(error instanceof LookupError)) throw error;
      outcome = { ok: false, error: error.message };
    }
    return html200(reply, tryItPage(viewer, { operations: catalogue.operations, operation, values, outcome }), outcome.ok ? 200 : 422);
  });

  registerKeyRoutes(app, {
    base: '/console/account',
    params: keyIdParams,
    audience: 'customer',
    signIn,
    account: async (principal) => (await ownAccount(principal)).username,
    service: actorService,
    baseUrl: (request) => baseUrlOf(request, options.baseUrl),
    back: () => '/console/account',
    render: html200,
  });

  // ---- operators ----

  registerOverviewRoute(app, { signIn, passwordFirst, render: html200, accounts: options.accounts, usage: options.allAccountsUsage, lookupStats: options.lookupStats, upstream: options.upstream, clock: options.clock });

  app.get<{ Querystring: { search?: string; offset?: number } }>('/console/admin/accounts', { schema: { querystring: listQuery } }, async (request, reply) => {
    const { viewer } = await signIn(request, 'operator');
    const { search = '', offset = 0 } = request.query;
    const limit = 50;
    const { accounts, total } = await options.accounts.list({ search, limit, offset });
    return passwordFirst(viewer, reply) ?? html200(reply, accountsPage(viewer, { accounts, total, search, offset, limit }));
  });

  app.post<{ Body: { username: string; credits?: number } }>('/console/admin/accounts', { schema: { body: form({ username: USERNAME, credits: int(0, MAX_TOP_UP) }, ['username']) } }, async (request, reply) => {
    const { principal, viewer } = await signIn(request, 'operator');
    requireWrite(principal);
    const { account, apiKey } = await actorService(principal, request).create(request.body.username, request.body.credits ?? 0);
    const back = accountPaths(account.username).page;
    return html200(reply, accountCreatedPage(viewer, secretShown(`Account ${account.username} is created with ${account.credits} credits and its first API key.`, account.username, apiKey, baseUrlOf(request, options.baseUrl), back)), 201);
  });

  app.get<{ Params: { username: string }; Querystring: LedgerQs & { done?: string } }>(
    '/console/admin/accounts/:username',
    { schema: { params: usernameParams, querystring: object({ ...(ledgerQs.properties as Record<string, Record<string, unknown>>), done: str(32) }) } },
    async (request, reply) => {
      const { viewer } = await signIn(request, 'operator');
      const account = await options.accounts.show(request.params.username);
      const { done, ...query } = request.query;
      const [view, users, audit] = await Promise.all([
        accountView(account, query),
        options.users.list(account.id),
        options.audit.list({ targetKind: 'account', target: account.username, limit: 20 }),
      ]);
      const notice = done === undefined ? undefined : DONE_MESSAGES[done];
      return passwordFirst(viewer, reply) ?? html200(reply, operatorAccountPage(viewer, { ...view, users, audit, notice }));
    },
  );

  const back = (reply: FastifyReply, username: string, done: keyof typeof DONE_MESSAGES) => reply.redirect(`${accountPaths(username).page}?done=${done}`, 303);

  app.post<{ Params: { username: string }; Body: { operation: 'grant' | 'remove'; amount: number; reference?: string; note?: string } }>(
    '/console/admin/accounts/:username/credits',
    { schema: { params: usernameParams, body: form({ operation: { type: 'string', enum: ['grant', 'remove'] }, amount: int(1, MAX_TOP_UP), reference: REFERENCE, note: NOTE }, ['operation', 'amount']) } },
    async (request, reply) => {
      const { principal } = await signIn(request, 'operator');
      requireWrite(principal);
      const { operation, amount, reference, note } = request.body;
      const service = actorService(principal, request);
      const { username } = request.params;
      // The same calls as POST /admin/api/accounts/:username/credits.
      const change = { account: username, amount, reference, note };
      if (operation === 'grant') await service.grantCredits(change);
      else await service.removeCredits(change);
      return back(reply, username, operation === 'grant' ? 'granted' : 'removed');
    },
  );

  app.post<{ Params: { username: string }; Body: { disabled: boolean } }>(
    '/console/admin/accounts/:username/status',
    { schema: { params: usernameParams, body: form({ disabled: { type: 'boolean' } }, ['disabled']) } },
    async (request, reply) => {
      const { principal } = await signIn(request, 'operator');
      requireWrite(principal);
      await actorService(principal, request).setDisabled(request.params.username, request.body.disabled);
      return back(reply, request.params.username, request.body.disabled ? 'disabled' : 'enabled');
    },
  );

  app.post<{ Params: { username: string }; Body: { requireApiKey: boolean; perSecond?: number | ''; perDay?: number | '' } }>(
    '/console/admin/accounts/:username/settings',
    { schema: { params: usernameParams, body: form({ requireApiKey: { type: 'boolean' }, perSecond: nullableRate(MAX_RATE_PER_SECOND), perDay: nullableRate(MAX_RATE_PER_DAY) }, ['requireApiKey']) } },
    async (request, reply) => {
      const { principal } = await signIn(request, 'operator');
      requireWrite(principal);
      const service = actorService(principal, request);
      const { username } = request.params;
      const { requireApiKey, perSecond, perDay } = request.body;
      const rate = (value: number | '' | undefined): number | null => (value === '' || value === undefined ? null : value);
      await service.setRequireApiKey(username, requireApiKey);
      await service.setRateLimits(username, { perSecond: rate(perSecond), perDay: rate(perDay) });
      return back(reply, username, 'saved');
    },
  );

  app.post<{ Params: { username: string }; Body: { name: string; role: 'owner' | 'member' } }>(
    '/console/admin/accounts/:username/users',
    { schema: { params: usernameParams, body: form({ name: USERNAME, role: { type: 'string', enum: ['owner', 'member'] } }, ['name', 'role']) } },
    async (request, reply) => {
      const { principal, viewer } = await signIn(request, 'operator');
      requireWrite(principal);
      const { user, inviteToken } = await options.users.withActor(actorOf(principal, request)).createCustomer(request.params.username, request.body.name, request.body.role);
      const inviteUrl = `${baseUrlOf(request, options.baseUrl)}/account/invite#${inviteToken}`;
      return html200(reply, inviteCreatedPage(viewer, { username: request.params.username, user: user.name, inviteUrl }), 201);
    },
  );

  void app.register(importConsoleRoutes, { imports: options.imports, signIn });

  registerKeyRoutes(app, {
    base: '/console/admin/accounts/:username',
    params: accountKeyParams,
    audience: 'operator',
    signIn,
    account: (_principal, request) => Promise.resolve((request.params as { username: string }).username),
    service: actorService,
    baseUrl: (request) => baseUrlOf(request, options.baseUrl),
    back: (username) => accountPaths(username).page,
    render: html200,
  });

  app.get<{ Querystring: { actor?: string; action?: string; target?: string; before?: number } }>('/console/admin/audit', { schema: { querystring: auditQuery } }, async (request, reply) => {
    const { viewer } = await signIn(request, 'operator');
    const limit = 100;
    const rows = await options.audit.list({ ...request.query, limit });
    const last = rows.at(-1);
    return passwordFirst(viewer, reply) ?? html200(reply, auditPage(viewer, { rows, filter: request.query, next: rows.length === limit && last ? last.id : null }));
  });

  // Pages kept in their own files, each registered with one line.
  const context: ConsoleContext = { signIn, render: html200, passwordFirst, form, baseUrl: (request) => baseUrlOf(request, options.baseUrl) };
  registerAlertPages(app, context, options);
  registerTestPlatePages(app, context, { ...options, catalogue: options.lookups.catalogue });
  registerTokenPages(app, context, options.users);
  registerSessionPages(app, context, options.users);

  return Promise.resolve();
};

const DONE_MESSAGES: Readonly<Record<string, string>> = {
  granted: 'Credits granted.',
  removed: 'Credits removed.',
  disabled: 'The account is disabled.',
  enabled: 'The account is enabled.',
  saved: 'Settings saved.',
  revoked: 'The key is revoked.',
};

interface KeyRouteDeps {
  readonly base: string;
  readonly params: Record<string, unknown>;
  readonly audience: Audience;
  readonly signIn: (request: FastifyRequest, audience: Audience) => Promise<{ principal: Principal; viewer: Viewer }>;
  /** The account's username: the session's own (customers) or the path's (operators). */
  readonly account: (principal: Principal, request: FastifyRequest) => Promise<string>;
  readonly service: (principal: Principal, request: FastifyRequest) => AccountService;
  readonly baseUrl: (request: FastifyRequest) => string;
  readonly back: (username: string) => string;
  readonly render: (reply: FastifyReply, body: string, status?: number) => FastifyReply;
}

/** Create, roll and revoke keys: the same service calls as the API's key routes (src/http/api/account.routes.ts). */
function registerKeyRoutes(app: FastifyInstance, deps: KeyRouteDeps): void {
  const accountParams = deps.audience === 'operator' ? { params: usernameParams } : {};
  app.post<{ Body: { name: string } }>(`${deps.base}/keys`, { schema: { ...accountParams, body: form({ name: NAME }, ['name']) } }, async (request, reply) => {
    const { principal, viewer } = await deps.signIn(request, deps.audience);
    requireWrite(principal);
    const username = await deps.account(principal, request);
    const { key, apiKey } = await deps.service(principal, request).createKey(username, request.body.name);
    return deps.render(reply, page(`Key ${key.name} created`, secretShown(`The new key ${key.name} works now.`, username, apiKey, deps.baseUrl(request), deps.back(username)), viewer), 201);
  });
  app.post<{ Params: { id: number } }>(`${deps.base}/keys/:id/roll`, { schema: { params: deps.params, body: form({}) } }, async (request, reply) => {
    const { principal, viewer } = await deps.signIn(request, deps.audience);
    requireWrite(principal);
    const username = await deps.account(principal, request);
    const rolled = await deps.service(principal, request).rollKey(username, request.params.id);
    const until = rolled.old.expiresAt === null ? '' : ` until ${rolled.old.expiresAt.slice(0, 16).replace('T', ' ')} UTC`;
    return deps.render(reply, page(`Key ${rolled.key.name} rolled`, html`${secretShown(`This is the new key. The old one keeps working${until}, so clients can switch over.`, username, rolled.apiKey, deps.baseUrl(request), deps.back(username))}`, viewer));
  });
  app.post<{ Params: { id: number } }>(`${deps.base}/keys/:id/revoke`, { schema: { params: deps.params, body: form({}) } }, async (request, reply) => {
    const { principal } = await deps.signIn(request, deps.audience);
    requireWrite(principal);
    const username = await deps.account(principal, request);
    await deps.service(principal, request).revokeKey(username, request.params.id);
    return reply.redirect(`${deps.back(username)}${deps.audience === 'operator' ? '?done=revoked' : ''}`, 303);
  });
}
