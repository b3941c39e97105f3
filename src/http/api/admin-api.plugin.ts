import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AccountError, type AccountService } from '../../accounts/account.service.js';
import type { AllAccountsUsage } from '../../accounts/all-accounts-usage.js';
import { LedgerQueries } from '../../accounts/ledger-queries.js';
import type { Alerting } from '../../alerts/alerting.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { Catalogue } from '../../catalogue/catalogue.js';
import type { ImportJobs } from '../../datasets/import/import-jobs.js';
import type { TestPlates } from '../../datasets/test-plates.js';
import type { LookupStatsRepository } from '../../ops/lookup-stats.repository.js';
import type { ProvidersView } from '../../providers/upstream/providers-view.js';
import type { SignupConfig } from '../../config/config.js';
import type { Clock } from '../../shared/clock.js';
import type { Throttles } from '../../users/login-throttle.js';
import type { UserService } from '../../users/user.service.js';
import { actorOf, installErrorHandling, limitRequests, noStoreAnswers, requireWrite } from '../auth/api-auth.js';
import { principalOf, requireAuth } from '../auth/api-principal.js';
import { registerDocsPage } from '../site/openapi-docs/openapi-docs-page.js';
import type { AccountScopeOptions } from './account-scope.js';
import { accountsRoutes, ownAccountRoutes } from './accounts.routes.js';
import { accountAlertsRoutes, operatorAlertsRoutes } from './alerts.routes.js';
import { auditRoutes } from './audit.routes.js';
import { creditsRoutes } from './credits.routes.js';
import { importRoutes } from './imports.routes.js';
import { keysRoutes } from './keys.routes.js';
import { ledgerRoutes } from './ledger.routes.js';
import type { OpenApiCollector } from './openapi-document.js';
import { overviewRoutes } from './overview.routes.js';
import { providersRoutes } from './providers.routes.js';
import { sessionRoutes } from './session.routes.js';
import { signupRoutes } from './signup.routes.js';
import { testPlatesRoutes } from './test-plates.routes.js';
import { tokensRoutes } from './tokens.routes.js';
import { usageRoutes } from './usage.routes.js';
import { accountUsersRoutes, operatorUsersRoutes } from './users.routes.js';

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
  /** The upstream providers: status as /readyz shows it, balance and spend (src/providers/upstream/providers-view.ts). */
  readonly providers: Pick<ProvidersView, 'view' | 'order'>;
  /** Self-service sign-up (SIGNUP_*): `POST /account/api/signup` and `/console/signup`. */
  readonly signup: SignupConfig;
  /** Lookups per hour, interface and outcome over every instance (the store's rollup, migration 0011). */
  readonly lookupStats: LookupStatsRepository;
  /** Uploaded JSON Lines files imported as jobs (the CLI's importer behind them). */
  readonly imports: ImportJobs;
}

/** The resources of one account, registered under `prefix`: its balance and ledger, keys and usage. */
async function registerAccountScope(app: Parameters<FastifyPluginAsync>[0], prefix: string, scope: AccountScopeOptions): Promise<void> {
  await app.register(ledgerRoutes, { ...scope, prefix });
  await app.register(keysRoutes, { ...scope, prefix: `${prefix}/keys` });
  await app.register(usageRoutes, { ...scope, prefix: `${prefix}/usage` });
}

/**
 * The operators' API under /admin/api (issue 16): accounts, keys, credits, ledger, usage, users,
 * operator tokens and the audit log. Viewers and read tokens read; admins and write tokens change.
 * Each resource is a plugin of its own file, registered with its prefix inside this scope, so the
 * login, CSRF and rate-limit hooks below guard every one of them.
 */
export const adminApiPlugin: FastifyPluginAsync<AdminApiOptions> = async (app, options) => {
  const ledger = new LedgerQueries(options.db);
  installErrorHandling(app, '/admin/api');
  noStoreAnswers(app);
  options.openApi.collect(app);
  app.get('/openapi.json', { config: { public: true } }, () => options.openApi.document());
  // The documentation page (the JSON interface's page too, src/http/site/openapi-docs/), public like the document.
  registerDocsPage(app, { title: 'vehicle-lookup admin and account API', documentUrl: '/admin/api/openapi.json', route: '/docs', pageUrl: '/admin/api/docs', assetRoute: '/docs', assetUrl: '/admin/api/docs', config: { public: true } });
  limitRequests(app, options.throttles.requests, 'admin');
  requireAuth(app, options.users, 'operator');

  await app.register(sessionRoutes, { users: options.users, throttle: options.throttles.login, audience: 'operator', tag: 'admin: session' });
  await app.register(accountsRoutes, { ...options, ledger, prefix: '/accounts' });
  await app.register(creditsRoutes, { ...options, prefix: '/accounts/:username/credits' });
  await registerAccountScope(app, '/accounts/:username', {
    accounts: options.accounts,
    ledger,
    account: (request) => options.accounts.show((request.params as { username: string }).username),
    accountInPath: true,
    tag: 'admin: accounts',
  });
  await app.register(accountUsersRoutes, { ...options, prefix: '/accounts/:username/users' });
  await app.register(operatorUsersRoutes, { ...options, prefix: '/operators' });
  await app.register(tokensRoutes, { ...options, prefix: '/tokens' });
  await app.register(auditRoutes, { ...options, prefix: '/audit' });
  await app.register(providersRoutes, { ...options, prefix: '/providers' });
  await app.register(overviewRoutes, { usage: options.allAccountsUsage, lookupStats: options.lookupStats });
  await app.register(testPlatesRoutes, { ...options, prefix: '/test-plates' });
  await app.register(importRoutes, { imports: options.imports, principal: principalOf, prefix: '/imports' });
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
  const own = async (request: FastifyRequest) => {
    const { user } = principalOf(request);
    if (user.account === null) throw new AccountError('NOT_FOUND', 'this user has no account');
    return options.accounts.show(user.account);
  };

  await app.register(sessionRoutes, { users: options.users, throttle: options.throttles.login, audience: 'customer', tag: 'account: session' });
  await app.register(signupRoutes, { users: options.users, signup: options.signup, prefix: '/signup' });
  await app.register(ownAccountRoutes, { account: own, prefix: '/account' });
  await registerAccountScope(app, '', { accounts: options.accounts, ledger, account: own, accountInPath: false, tag: 'account' });
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
