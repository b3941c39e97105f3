import { randomUUID } from 'node:crypto';
import { STORE_AWAY, isStoreUnavailable } from './storage/store-unavailable.js';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AllAccountsUsage } from './accounts/all-accounts-usage.js';
import { LedgerQueries } from './accounts/ledger-queries.js';
import { accountApiPlugin, adminApiPlugin } from './http/api/admin-api.plugin.js';
import { OpenApiCollector } from './http/api/openapi-document.js';
import { consolePlugin } from './http/console/console.plugin.js';
import type { Config } from './config/config.js';
import { DEFAULT_ROUTING } from './config/paid-upstream-config.js';
import { UpstreamBalanceAlerts } from './alerts/upstream-balance-alerts.js';
import { Catalogue } from './catalogue/catalogue.js';
import { OPERATIONS } from './catalogue/operations.js';
import { logStream } from './ops/log-stream.js';
import { LookupCounts, LookupRollup } from './ops/lookup-rollup.js';
import { coolingIn, ProvidersView } from './providers/upstream/providers-view.js';
import { RegcheckGateway } from './providers/regcheck/regcheck-gateway.js';
import { AnswerRecordings } from './providers/upstream/answer-recording.js';
import { UpstreamSpendCounts, UpstreamSpendRepository, type UpstreamSpendRow } from './providers/upstream/upstream-spend.js';
import { LookupStatsRepository } from './ops/lookup-stats.repository.js';
import { Metrics } from './ops/metrics.js';
import { requestLoggerFactory } from './http/request-logger.js';
import { opsPlugin } from './http/site/health.plugin.js';
import { asmxHttpPlugin } from './http/lookup/asmx-http/asmx-http.plugin.js';
import { jsonPlugin } from './http/lookup/json/json.plugin.js';
import { openApiPlugin } from './http/lookup/json/openapi.plugin.js';
import { serviceEndpoints } from './http/lookup/service-endpoints.js';
import { soapPlugin } from './http/lookup/soap/soap.plugin.js';
import { wsdlPlugin } from './http/lookup/wsdl/wsdl.plugin.js';
import { openRedis } from './redis/redis-services.js';
import { createServices, type ServiceOptions, type Services } from './services.js';
import { systemClock, type Clock } from './shared/clock.js';
import type { Repeat } from './shared/repeat.js';
import { internalError } from './shared/internal-error.js';
import { openStorage, type Storage } from './storage/create-database.js';
import { describeError } from './storage/store-unavailable.js';
import { creditsPlugin } from './http/site/credits.plugin.js';
import { ClientErrors } from './http/client-errors.js';
import { imagePlugin } from './http/site/image.plugin.js';
import { originForm } from './http/request-target.js';

export interface BuiltApp {
  readonly app: FastifyInstance;
  readonly services: Services;
  readonly metrics: Metrics;
  /** This instance's lookup counts and their writes to the store's hourly rollup (`flush` writes now). */
  readonly lookupRollup: LookupRollup;
  /** This instance's upstream calls and cache answers and their writes to the store's daily rollup (`flush` writes now). */
  readonly upstreamSpend: LookupRollup<UpstreamSpendRow>;
  /** The original service's balance watch, when REGCHECK_USERNAME is set. */
  readonly regcheck: RegcheckGateway | undefined;
  /** The record file of each paid upstream that has one (`<NAME>_RECORD_FILE`). */
  readonly recordings: AnswerRecordings;
  /** Marks the app as shutting down: /readyz answers 503 from then on. */
  drain(): void;
}

export interface BuildOptions {
  readonly clock?: Clock;
  /** The timer of the lookup statistics' periodic writes (tests fire it themselves). */
  readonly lookupStatsRepeat?: Repeat;
  /** Use this store instead of opening the configured one (tests share one). */
  readonly storage?: Storage;
  /**
   * Called with the bare app before any route is registered, so a hook added here runs on every
   * route: test/admin/openapi-answers.test.ts reads each answer before its response schema
   * serialises it, and so finds a member a schema would drop.
   */
  readonly beforeRoutes?: (app: FastifyInstance) => void;
  /** The timer of the upstream balance reads (about once a minute; tests fire it themselves). */
  readonly balanceRepeat?: Repeat;
  /** The timer of the upstream spend's periodic writes (tests fire it themselves). */
  readonly upstreamSpendRepeat?: Repeat;
  /** Providers registered beside the configured ones (test/routing/: fake paid upstreams only a test registers). */
  readonly extraRegistrations?: ServiceOptions['extraRegistrations'];
}

/** A client's X-Request-Id is logged beside ours when it looks sane (log lines stay greppable). */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The fields of a request in its log lines: Fastify's own, plus the client's X-Request-Id as
 * `clientRequestId`. That header is only a tracing id (proxies make one per attempt, clients reuse
 * them: a ledger under test held 1,241 duplicates), so it is never our request id (issue 17 item 3).
 */
function requestLogFields(request: FastifyRequest): Record<string, unknown> {
  const client = request.headers['x-request-id'];
  return {
    method: request.method,
    url: request.url,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket.remotePort,
    ...(typeof client === 'string' && CLIENT_REQUEST_ID.test(client) ? { clientRequestId: client } : {}),
  };
}

/** Builds the whole service without listening (STYLE.md 9). */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<BuiltApp> {
  const clock = options.clock ?? systemClock;
  // Counted beside the lookups metric, written to the store by the rollup below (src/ops/lookup-rollup.ts).
  const lookupCounts = new LookupCounts(clock.millis ? clock.millis.bind(clock) : () => clock.now().getTime());
  const metrics = new Metrics(lookupCounts, (config.providers.routing ?? DEFAULT_ROUTING).currency);
  const clientErrors = new ClientErrors();
  const logDestination = logStream(config.logFormat);
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // JSON lines, or readable lines on a terminal (LOG_FORMAT; src/ops/log-stream.ts).
      ...(logDestination ? { stream: logDestination } : {}),
      // API keys travel in the Authorization header; nothing else we log carries a secret.
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
      serializers: { req: requestLogFields },
    },
    // request.log becomes a pino child only when a request logs a line (src/http/request-logger.ts).
    childLoggerFactory: requestLoggerFactory,
    trustProxy: config.trustProxy,
    // Our request id: generated here, unique, written to the ledger and sent back in x-request-id.
    // The client's X-Request-Id is logged beside it (requestLogFields) and used for nothing else;
    // a retry that must not pay again sends an Idempotency-Key instead.
    genReqId: () => randomUUID(),
    // Vehicle lookups are small; anything larger is not a request we serve.
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    // Slow and idle clients (issue 17 item 5): without a request timeout, a request that declared a
    // body and then trickled or idled held its connection for ever, and enough of them used up the
    // file descriptors. docs/configuration.md and docs/operating.md say how to choose these.
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    connectionTimeout: config.http.socketTimeoutMs,
    http: {
      headersTimeout: config.http.headersTimeoutMs,
      requestTimeout: config.http.requestTimeoutMs,
      // Node enforces both timeouts on this sweep (30 s by default, which would double a 30 s
      // timeout); a sweep walks the open connections, cheap at a second's interval.
      connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(config.http.headersTimeoutMs / 4))),
      // Node answers an HTTP/1.1 request without Host itself, with a 400 that closes the
      // connection while the requests pipelined behind it are still dispatched (and charged), so
      // their paid answers were lost (found by test/security/debit-reconciliation.fuzz.test.ts).
      // The onRequest hook below answers it instead, and the connection goes on.
      requireHostHeader: false,
    },
    // Errors before a request is parsed (headers too large, timeouts, bytes the parser rejects):
    // plain text, not Fastify's JSON, and only once the answers in flight on the connection are
    // written (src/http/client-errors.ts).
    clientErrorHandler: clientErrors.handle,
    // The router rejects malformed percent-encoding before any route runs. On the JSON interface
    // that is still an API error, so it gets the interface's form: 500 plain text (spec "Errors").
    frameworkErrors: (error, request, reply) => {
      const json = originForm(request.raw.url ?? '').startsWith('/api/json.aspx/');
      const status = json ? 500 : error.statusCode ?? 400;
      // frameworkErrors is typed with the route's generic reply; it is a plain reply here.
      void (reply as unknown as FastifyReply)
        .code(status)
        .header('access-control-allow-origin', '*')
        .type('text/plain; charset=utf-8')
        .send(error.code === 'FST_ERR_BAD_URL' ? 'The request path has malformed percent-encoding' : 'Bad request');
    },
  });

  const storage =
    options.storage ??
    (await openStorage({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      poolSize: config.dbPoolSize,
      sqliteSynchronous: config.sqliteSynchronous,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      commitSettleMs: config.dbCommitSettleMs,
      startRetry: {
        waitMs: config.dbStartWaitMs,
        onRetry: (message) => {
          app.log.warn(message);
        },
      },
      onConnectionError: (error) => {
        app.log.warn(`a database connection failed (${describeError(error)}); it is dropped and the next query opens a new one`);
      },
    }));
  // Optional (issue 5): shared rate-limit counters, account changes between instances, a shared
  // cache. Start-up goes on without it when it is unreachable; docs/scaling.md "Redis".
  const redis =
    config.redisUrl === undefined
      ? undefined
      : await openRedis(
          { url: config.redisUrl, keyPrefix: config.redisKeyPrefix },
          {
            name: 'vehicle-lookup',
            subscribe: true,
            log: {
              warn: (message, error) => {
                app.log.warn({ err: error }, message);
              },
              info: (message) => {
                app.log.info(message);
              },
            },
            onRateLimitFallback: () => {
              metrics.rateLimitFallbacks.inc();
            },
            onThrottleFallback: () => {
              metrics.throttleFallbacks.inc();
            },
          },
        );
  if (redis) app.addHook('onClose', async () => redis.close());
  const warn = {
    warn: (message: string, error?: unknown) => {
      app.log.warn({ err: error }, message);
    },
  };
  // The original service as an upstream (issue 24): its balance gate plugs into its provider.
  const regcheck = config.providers.regcheck
    ? new RegcheckGateway(config.providers.regcheck, { monitor: metrics.upstream, clock, log: warn, db: storage.db, ...(options.balanceRepeat ? { repeat: options.balanceRepeat } : {}) })
    : undefined;
  // Every paid upstream's record file (<NAME>_RECORD_FILE): each answer it gives, as import lines.
  const recordings = AnswerRecordings.open(config.providers, { catalogue: new Catalogue(OPERATIONS), clock, log: warn });
  const services = createServices(storage, {
    ...(regcheck ? { regcheckHooks: regcheck.hooks } : {}),
    recordings,
    ...(options.extraRegistrations ? { extraRegistrations: options.extraRegistrations } : {}),
    clock,
    providers: config.providers,
    vin: config.vin,
    requireApiKeyEverywhere: config.requireApiKey,
    observer: metrics,
    rateLimitDefaults: config.rateLimitDefaults,
    alerts: config.alerts,
    alertLog: {
      warn: (message, error) => {
        app.log.warn({ err: error }, message);
      },
    },
    ledgerLog: {
      warn: (message, error) => {
        app.log.warn({ err: error }, message);
      },
    },
    idempotencyRetentionMs: config.idempotencyRetentionHours * 3_600_000,
    operationCosts: config.operationCosts,
    imports: {
      maxBytes: config.importMaxBytes,
      log: (message, error) => {
        app.log.warn({ err: error }, message);
      },
    },
    anonymous: {
      operations: new Set(config.anonymous.operations),
      limits: { perSecond: config.anonymous.perSecond, perDay: config.anonymous.perDay },
    },
    ...(redis ? { accountChanges: redis.accountChanges, rateCounters: redis.rateCounters, throttleCounters: redis.throttleCounters, sharedCache: redis.sharedCache } : {}),
  });
  // Webhook sending and the alert sweep run in the server only, never in a CLI command; so does the balance watch.
  services.alerting.start();
  const upstreamAlerts = new UpstreamBalanceAlerts(storage, services.alerting.webhooks, clock);
  regcheck?.start(upstreamAlerts);
  // The router's alerts (funds, quota, refused keys, budgets), and a refused key asked again after a restart.
  await services.router.start(upstreamAlerts);
  // Spend per paid upstream and its routing state on /metrics (docs/providers.md "Monitoring").
  metrics.routing.watch(() => services.router.status(coolingIn(metrics.upstream.snapshot())), warn);
  // Upstream calls and cache answers per day, every instance's added up (docs/providers.md "Upstream spend").
  const upstreamSpendRepository = new UpstreamSpendRepository(storage.db);
  const upstreamSpend = new LookupRollup(
    new UpstreamSpendCounts(clock.millis ? clock.millis.bind(clock) : () => clock.now().getTime()).listenTo(metrics.upstream),
    storage,
    upstreamSpendRepository,
    config.lookupStatsFlushSeconds * 1000,
    {
      warn: (message, details) => {
        app.log.warn(details, message);
      },
    },
    options.upstreamSpendRepeat,
    'upstream spend',
  );
  upstreamSpend.start();
  const lookupStats = new LookupStatsRepository(storage.db);
  const lookupRollup = new LookupRollup(
    lookupCounts,
    storage,
    lookupStats,
    config.lookupStatsFlushSeconds * 1000,
    {
      warn: (message, details) => {
        app.log.warn(details, message);
      },
    },
    options.lookupStatsRepeat,
  );
  lookupRollup.start();

  let draining = false;
  options.beforeRoutes?.(app);

  // Past the cap, Node closes new connections as they arrive, so a flood of clients cannot take
  // the descriptors the store and the answered connections need.
  app.server.maxConnections = config.http.maxConnections;
  // A client may end its side of the connection once its request is sent (`shutdown(SHUT_WR)`:
  // nc, some HTTP/1.0 clients and proxies); nothing in HTTP forbids it, and the answer is
  // still owed. By default Node's server ends the socket when the client's FIN arrives
  // (socketOnEnd in lib/_http_server.js), so an answer not written in that same turn of the event
  // loop (a debit committed over the network to PostgreSQL, an upstream call) was lost while the
  // lookup was charged (issue 31). With this set, Node answers every request already read and then
  // ends the connection (the last response's `_last`); a request cut off in its body is still a
  // parse error (src/http/client-errors.ts). Node has the switch but no option or type for it.
  (app.server as typeof app.server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  app.server.on('drop', () => {
    metrics.connectionsDropped.inc();
  });

  app.addHook('onRequest', (request, reply, done) => {
    // Every response carries CORS and the request id (interface spec "JSON interface": CORS).
    void reply.header('access-control-allow-origin', '*').header('x-request-id', request.id);
    // RFC 9112 section 3.2: a server MUST answer 400 to an HTTP/1.1 request without Host.
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      void reply.code(400).type('text/plain; charset=utf-8').send('Bad Request: an HTTP/1.1 request must carry a Host header');
      return;
    }
    done();
  });
  // From here on the request may be charged: a client error on its connection waits for its answer.
  app.server.on('request', clientErrors.received);
  app.addHook('preHandler', (_request, reply, done) => {
    clientErrors.dispatched(reply.raw);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    metrics.onHttpResponse(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode);
    done();
  });

  // No stack traces or internal messages leave the process (issue 2 "Bad input ... never a stack trace").
  app.setErrorHandler((error, request, reply) => {
    if (isStoreUnavailable(error)) {
      request.log.warn({ err: error }, 'request failed: the database is away');
      return reply.code(STORE_AWAY.status).header('retry-after', String(STORE_AWAY.retryAfterSeconds)).type('text/plain; charset=utf-8').send(STORE_AWAY.message);
    }
    const status = typeof (error as { statusCode?: unknown }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
    if (status >= 500) {
      return reply.code(500).type('text/plain; charset=utf-8').send(internalError(request, error, 'request failed'));
    }
    return reply.code(status).type('text/plain; charset=utf-8').send(error instanceof Error ? error.message : 'Bad request');
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).type('text/plain; charset=utf-8').send(`Not found: ${request.method} ${originForm(request.url).split('?', 1)[0] ?? ''}`),
  );

  const endpoints = serviceEndpoints(services.catalogue, { reg: config.regNamespace, bespoke: config.bespokeNamespace });
  const xmlOptions = { endpoints, pipeline: services.pipeline, baseUrl: config.baseUrl, bodyLimit: config.xmlBodyLimit };
  await app.register(jsonPlugin, { catalogue: services.catalogue, pipeline: services.pipeline, realm: config.authRealm, baseUrl: config.baseUrl });
  await app.register(openApiPlugin, { catalogue: services.catalogue });
  await app.register(soapPlugin, xmlOptions);
  await app.register(asmxHttpPlugin, xmlOptions);
  await app.register(wsdlPlugin, { endpoints, baseUrl: config.baseUrl });
  await app.register(imagePlugin, { imagesDir: config.imagesDir });
  if (config.getCreditsEnabled) await app.register(creditsPlugin, { accounts: services.accounts });
  await app.register(opsPlugin, { storage, metrics, isDraining: () => draining, metricsToken: config.http.metricsToken });
  // The admin and self-service API (issue 16).
  const adminOptions = { accounts: services.accounts, users: services.users, audit: services.audit, db: storage.db, clock, allAccountsUsage: new AllAccountsUsage(new LedgerQueries(storage.db), clock), baseUrl: config.baseUrl, openApi: new OpenApiCollector(), alerting: services.alerting, testPlates: services.testPlates, catalogue: services.catalogue, providers: new ProvidersView(() => metrics.upstream.snapshot(), upstreamSpendRepository, clock, regcheck ? () => regcheck.balance.refresh() : undefined, { currency: services.router.routing.currency, status: (cooling) => services.router.status(cooling), order: () => services.router.order() }), lookupStats, signup: config.signup, throttles: services.throttles, imports: services.imports };
  await app.register(adminApiPlugin, { ...adminOptions, prefix: '/admin/api' });
  await app.register(accountApiPlugin, { ...adminOptions, prefix: '/account/api' });
  await app.register(consolePlugin, {
    ...adminOptions,
    services: endpoints.map((e) => ({ name: e.definition.serviceName, path: e.definition.path })),
    // Try it answers in the GET binding's XML: the namespace of the first service that serves the operation.
    lookups: { catalogue: services.catalogue, pipeline: services.pipeline, namespaceOf: (op) => endpoints.find((e) => e.operations.includes(op))?.namespace ?? config.regNamespace },
    upstream: () => metrics.upstream.snapshot(),
    topUp: config.consoleTopUp,
  });

  if (!options.storage) app.addHook('onClose', async () => storage.close());
  // Added after the store's hook so that it runs before it (Fastify runs onClose hooks last added
  // first): the alert loops record their ended attempts in the store as they stop.
  app.addHook('onClose', async () => services.close());
  // Last added, so first run: this instance's last lookup counts reach the store before it closes.
  app.addHook('onClose', async () => {
    await regcheck?.close();
    recordings.close();
    await upstreamSpend.close();
    await lookupRollup.close();
  });

  return {
    app,
    services,
    metrics,
    lookupRollup,
    upstreamSpend,
    regcheck,
    recordings,
    drain: () => {
      draining = true;
    },
  };
}
