import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { STORE_AWAY, isStoreUnavailable } from '../../storage/store-unavailable.js';
import type { AccountService } from '../../accounts/account.service.js';
import type { AllAccountsUsage } from '../../accounts/all-accounts-usage.js';
import { LedgerFilterError, LedgerQueries } from '../../accounts/ledger-queries.js';
import { ApiError, domainError, authenticate, CSRF_HEADER, limitRequests, readCookie, SESSION_COOKIE, type Principal } from '../auth/api-auth.js';
import { object, str, type Schema } from '../api/api-schemas.js';
import type { Throttles } from '../../users/login-throttle.js';
import type { UserService } from '../../users/user.service.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { ImportJobs } from '../../datasets/import/import-jobs.js';
import type { Clock } from '../../shared/clock.js';
import { baseUrlOf } from '../base-url.js';
import { originForm } from '../request-target.js';
import { errorPage, notFoundPage } from './auth-pages.js';
import { frontPageRoutes } from '../site/front-page.routes.js';
import type { ServiceLink } from '../site/front-page.js';
import { CSRF_FIELD, type Viewer } from './layout.js';
import { accountPaths } from './operator-pages.js';
import { securePage } from '../security-headers.js';
import type { SignupConfig } from '../../config/config.js';
import { TRY_IT_PATH } from './try-it-page.js';
import type { Catalogue } from '../../catalogue/catalogue.js';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import type { LookupPipeline } from '../../lookup/lookup-pipeline.js';
import type { LookupStatsRepository } from '../../ops/lookup-stats.repository.js';
import type { ProviderStatus } from '../../providers/upstream/upstream-monitor.js';
import type { ProvidersView } from '../../providers/upstream/providers-view.js';
import { ownAccount, accountPages } from './account.routes.js';
import { accountsPages, operatorAccountHtml } from './accounts.routes.js';
import { alertPages, type AlertPagesOptions } from './alerts.routes.js';
import { assetRoutes } from './assets.routes.js';
import { ASSETS, ASSETS_PREFIX } from './console-assets.js';
import type { Audience, ConsoleContext } from './console-context.js';
import { auditPages } from './audit.routes.js';
import { creditPages } from './credits.routes.js';
import { CUSTOMER_PATHS, customerPage, lowCreditNotice } from './customer-pages.js';
import type { Account } from '../../accounts/account.js';
import { accountView } from './account-view.js';
import { IMPORTS_PATH } from './import-pages.js';
import { importPages } from './imports.routes.js';
import { invitePages } from './invites.routes.js';
import { keyPages } from './keys.routes.js';
import { overviewPages } from './overview.routes.js';
import { providerPages } from './providers.routes.js';
import { sessionPages } from './session.routes.js';
import { loginAfterRefusal } from './session-end.js';
import { withNext } from './return-path.js';
import { SIGNUP_PATH } from './signup-pages.js';
import { signupPages } from './signup.routes.js';
import { TEST_PLATES_PATH } from './test-plate-pages.js';
import { testPlatePages, type TestPlatePagesOptions } from './test-plates.routes.js';
import { TOKENS_PATH } from './token-pages.js';
import { tokenPages } from './tokens.routes.js';
import { TryItSamples } from './try-it-choices.js';
import { tryItPages } from './try-it.routes.js';
import { userPages } from './users.routes.js';

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
  /** The upstream providers with balance and spend, and the router's order of the paid ones, for the providers page (the admin API's /providers). */
  readonly providers: Pick<ProvidersView, 'view' | 'order'>;
  /** Low-credit thresholds and webhook endpoints (the API's services). */
  readonly alerting: AlertPagesOptions['alerting'];
  /** The free test plates (the admin API's service). */
  readonly testPlates: TestPlatePagesOptions['testPlates'];
  /** Self-service sign-up (SIGNUP_*): its page, and the links to it while it is on. */
  readonly signup: SignupConfig;
  /** Lookups per hour, interface and outcome over every instance, for the operator overview. */
  readonly lookupStats: LookupStatsRepository;
  /** Import jobs, for the Imports pages (src/http/console/imports.routes.ts). */
  readonly imports: ImportJobs;
  /** CONSOLE_TOPUP_URL: how a customer gets more credits (a link or a sentence). */
  readonly topUp?: string | undefined;
}

/** Forms post at most this much (the largest form is a few hundred bytes). */
const FORM_BODY_LIMIT = 16 * 1024;

/** The request's path without its query. */
const pathOf = (request: FastifyRequest): string => originForm(request.url).split('?', 1)[0] ?? '';
const EMPTY_MEANS_DEFAULT = new Set(['perSecond', 'perDay']);

type Form = Record<string, string>;

/** A form's schema: a body schema (object()) that also allows the CSRF field. */
function formOf(body: Schema): Schema {
  const { properties = {}, required = [] } = body as { properties?: Record<string, Schema>; required?: readonly string[] };
  return object({ ...properties, [CSRF_FIELD]: str(100) }, required);
}
/** Every form schema allows the CSRF field besides its own. */
const form = (properties: Record<string, Schema>, required: readonly string[] = []): Schema => formOf(object(properties, required));

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
  if (isStoreUnavailable(error)) return { status: STORE_AWAY.status, text: STORE_AWAY.message };
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  return { status, text: status === 500 ? 'Internal error.' : error.message };
}

/**
 * The web console and the front page (issue 18): server-rendered HTML over the same services,
 * authentication, CSRF tokens and roles as the admin and account API (src/http/api/). The console
 * decides nothing itself: a viewer's buttons are hidden, and requireWrite refuses the write anyway.
 *
 * This scope holds what every page shares (the form parser, the sign-in, the request budget, the
 * security headers, the error page); each resource is a plugin of its own file, registered below
 * with its prefix and the context (`ctx`), so its routes inherit all of it.
 */
export const consolePlugin: FastifyPluginAsync<ConsoleOptions> = async (app, options) => {
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
  /**
   * Who is looking at an error or a missing page: the signed-in viewer, else the session's user
   * (a customer refused an operator page is still logged in, and the header says so).
   */
  async function viewerOf(request: FastifyRequest): Promise<Viewer | undefined> {
    const known = viewers.get(request)?.viewer;
    if (known) return known;
    const sessionId = readCookie(request, SESSION_COOKIE);
    if (sessionId === undefined) return undefined;
    try {
      const session = await options.users.session(sessionId);
      if (!session) return undefined;
      const { user } = session;
      return { user, csrf: session.csrfToken, canWrite: !user.mustChangePassword && (user.role === 'admin' || user.role === 'owner'), here: pathOf(request) };
    } catch (err) {
      // The page still answers without the header (the store being down is what failed).
      request.log.warn({ err }, 'console: session of an error page not read');
      return undefined;
    }
  }
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const { status, text } = describeError(error);
    if (status === 500) request.log.error({ err: error }, 'console request failed');
    // No live session: to the login page, saying why (ended, expired) and coming back here after (issue 26 item 12).
    if (status === 401) return reply.redirect(loginAfterRefusal(request, options.clock.now()), 303);
    if (error instanceof ApiError && error.retryAfter !== undefined) void reply.header('retry-after', String(error.retryAfter));
    if (status === STORE_AWAY.status && isStoreUnavailable(error)) void reply.header('retry-after', String(STORE_AWAY.retryAfterSeconds));
    const viewer = await viewerOf(request);
    return reply.code(status).type('text/html; charset=utf-8').send(errorPage(status, status === 500 ? `Internal error; quote request id ${request.id} to the operator.` : text, viewer));
  });
  // An unknown console URL: a console page with the layout and navigation (issue 26 item 9).
  await app.register(
    (scope, _opts, done) => {
      scope.setNotFoundHandler(async (request, reply) => {
        const viewer = await viewerOf(request);
        return reply.code(404).type('text/html; charset=utf-8').send(notFoundPage(originForm(request.url).split('?', 1)[0] ?? '', viewer));
      });
      done();
    },
    { prefix: '/console' },
  );

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
    const signedIn = { principal, viewer: { user: principal.user, csrf: session.csrfToken, canWrite: principal.canWrite, here: pathOf(request) } };
    viewers.set(request, signedIn);
    return signedIn;
  }

  const render = (reply: FastifyReply, body: string, status = 200) => reply.code(status).type('text/html; charset=utf-8').send(body);
  // The page asked for comes after the one-time password is replaced (issue 26 item 12).
  const passwordFirst = (viewer: Viewer, reply: FastifyReply) => {
    if (!viewer.user.mustChangePassword) return undefined;
    const home = viewer.user.accountId === null ? '/console/admin' : '/console/account';
    return reply.redirect(viewer.here === home ? '/console/password' : withNext('/console/password', viewer.here), 303);
  };
  const ctx: ConsoleContext = { signIn, render, passwordFirst, form, formOf, baseUrl: (request) => baseUrlOf(request, options.baseUrl) };
  const views = { accounts: options.accounts, ledger, clock: options.clock, operations: options.lookups.catalogue.operations.map((o) => o.name) };
  const OPERATOR_ACCOUNT = '/console/admin/accounts/:username';

  // A customer's low or empty balance, with the way to more credits (issue 26 item 4).
  const creditState = async (account: Account) => lowCreditNotice(account.credits, (await options.alerting.alerts.thresholds(account.id)).thresholds, options.topUp);

  // ---- public: front page, assets, login, invite, sign-up ----
  await app.register(frontPageRoutes, { ctx, services: options.services, signup: options.signup });
  await app.register(assetRoutes, { prefix: ASSETS_PREFIX });
  // Browsers ask for /favicon.ico on pages without an icon link (the OpenAPI pages): the console's icon, not a 404 in the log.
  app.get('/favicon.ico', (_request, reply) => reply.redirect(ASSETS.icon.path, 301));
  await app.register(sessionPages, { ctx, users: options.users, throttles: options.throttles, signup: options.signup, clock: options.clock, prefix: '/console' });
  await app.register(invitePages, { ctx, users: options.users, accepts: true, prefix: '/console/invite' });
  // The admin API's invite links point at /account/invite#TOKEN; the page posts to /console/invite.
  await app.register(invitePages, { ctx, users: options.users, accepts: false, prefix: '/account/invite' });
  await app.register(signupPages, { ctx, users: options.users, signup: options.signup, prefix: SIGNUP_PATH });

  // ---- customers ----
  await app.register(accountPages, { ctx, ...views, credit: creditState, prefix: CUSTOMER_PATHS.page });
  const samples = new TryItSamples(options.lookups.catalogue, options.testPlates);
  await app.register(tryItPages, { ctx, accounts: options.accounts, lookups: options.lookups, credit: creditState, samples, prefix: TRY_IT_PATH });
  await app.register(keyPages, {
    ctx,
    accounts: options.accounts,
    audience: 'customer',
    account: async (principal) => (await ownAccount(options, principal)).username,
    back: () => CUSTOMER_PATHS.page,
    formPage: async (viewer, username, error) => customerPage(viewer, await accountView(views, await options.accounts.show(username), {}), undefined, error),
    prefix: `${CUSTOMER_PATHS.page}/keys`,
  });
  await app.register(alertPages, { ctx, alerting: options.alerting, accounts: options.accounts, scope: 'own-account', prefix: CUSTOMER_PATHS.page });

  // ---- operators ----
  await app.register(overviewPages, { ctx, accounts: options.accounts, usage: options.allAccountsUsage, lookupStats: options.lookupStats, upstream: options.upstream, clock: options.clock, prefix: '/console/admin' });
  await app.register(providerPages, { ctx, providers: options.providers, prefix: '/console/admin/providers' });
  await app.register(accountsPages, { ctx, ...views, users: options.users, audit: options.audit, prefix: '/console/admin/accounts' });
  await app.register(creditPages, { ctx, ...views, users: options.users, audit: options.audit, prefix: `${OPERATOR_ACCOUNT}/credits` });
  await app.register(userPages, { ctx, ...views, users: options.users, audit: options.audit, prefix: `${OPERATOR_ACCOUNT}/users` });
  await app.register(keyPages, {
    ctx,
    accounts: options.accounts,
    audience: 'operator',
    account: (_principal, request) => Promise.resolve((request.params as { username: string }).username),
    back: (username) => accountPaths(username).page,
    formPage: (viewer, username, error) => operatorAccountHtml({ ...views, users: options.users, audit: options.audit }, viewer, username, {}, { error }),
    prefix: `${OPERATOR_ACCOUNT}/keys`,
  });
  await app.register(alertPages, { ctx, alerting: options.alerting, accounts: options.accounts, scope: 'any-account', prefix: OPERATOR_ACCOUNT });
  await app.register(alertPages, { ctx, alerting: options.alerting, accounts: options.accounts, scope: 'operator', prefix: '/console/admin' });
  await app.register(importPages, { ctx, imports: options.imports, prefix: IMPORTS_PATH });
  await app.register(auditPages, { ctx, audit: options.audit, prefix: '/console/admin/audit' });
  await app.register(testPlatePages, { ctx, testPlates: options.testPlates, catalogue: options.lookups.catalogue, prefix: TEST_PLATES_PATH });
  await app.register(tokenPages, { ctx, users: options.users, prefix: TOKENS_PATH });
};
