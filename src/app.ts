import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { accountApiPlugin, adminApiPlugin } from './admin/admin-api.plugin.js';
import { OpenApiCollector } from './admin/openapi-document.js';
import { UserService } from './admin/user.service.js';
import { consolePlugin } from './console/console.plugin.js';
import type { Config } from './config.js';
import { Metrics } from './ops/metrics.js';
import { requestLoggerFactory } from './ops/request-logger.js';
import { opsPlugin } from './ops/health.plugin.js';
import { asmxHttpPlugin } from './protocols/asmx-http/asmx-http.plugin.js';
import { jsonPlugin } from './protocols/json/json.plugin.js';
import { serviceEndpoints } from './protocols/service-endpoints.js';
import { soapPlugin } from './protocols/soap/soap.plugin.js';
import { wsdlPlugin } from './protocols/wsdl/wsdl.plugin.js';
import { openRedis } from './redis/redis-services.js';
import { createServices, type Services } from './services.js';
import { systemClock, type Clock } from './shared/clock.js';
import { openStorage, type Storage } from './storage/create-database.js';
import { creditsPlugin } from './web/credits.plugin.js';
import { imagePlugin } from './web/image.plugin.js';

export interface BuiltApp {
  readonly app: FastifyInstance;
  readonly services: Services;
  readonly metrics: Metrics;
  /** Marks the app as shutting down: /readyz answers 503 from then on. */
  drain(): void;
}

export interface BuildOptions {
  readonly clock?: Clock;
  /** Use this store instead of opening the configured one (tests share one). */
  readonly storage?: Storage;
}

/** Request ids from clients are kept when they look sane, so callers can correlate logs. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Builds the whole service without listening (STYLE.md 9). */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<BuiltApp> {
  const metrics = new Metrics();
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // API keys travel in the Authorization header; nothing else we log carries a secret.
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    },
    // request.log becomes a pino child only when a request logs a line (src/ops/request-logger.ts).
    childLoggerFactory: requestLoggerFactory,
    trustProxy: config.trustProxy,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Vehicle lookups are small; anything larger is not a request we serve.
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    // Errors before a request is parsed (headers too large, timeouts): plain text, not Fastify's JSON.
    clientErrorHandler: (error: NodeJS.ErrnoException, socket) => {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const [status, reason] =
        error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large'] : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'Request Timeout'] : [400, 'Bad Request'];
      const body = `${reason}\r\n`;
      socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    },
    // The router rejects malformed percent-encoding before any route runs. On the JSON interface
    // that is still an API error, so it gets the interface's form: 500 plain text (spec "Errors").
    frameworkErrors: (error, request, reply) => {
      const json = (request.raw.url ?? '').startsWith('/api/json.aspx/');
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
      onConnectionError: (error) => {
        app.log.warn({ err: error }, 'a pooled database connection failed; it will be replaced');
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
          },
        );
  if (redis) app.addHook('onClose', async () => redis.close());
  const services = createServices(storage, {
    clock: options.clock ?? systemClock,
    env: config.env,
    requireApiKeyEverywhere: config.requireApiKey,
    observer: metrics,
    sqliteDebitWorker: config.sqliteDebitWorker,
    rateLimitDefaults: config.rateLimitDefaults,
    ...(redis ? { accountChanges: redis.accountChanges, rateCounters: redis.rateCounters, sharedCache: redis.sharedCache } : {}),
  });
  // The debit worker is up before the first request; pending debits are answered before the
  // store closes.
  await services.start();
  app.addHook('onClose', async () => services.close());

  let draining = false;

  app.addHook('onRequest', (request, reply, done) => {
    // Every response carries CORS and the request id (interface spec "JSON interface": CORS).
    void reply.header('access-control-allow-origin', '*').header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    metrics.onHttpResponse(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode);
    done();
  });

  // No stack traces or internal messages leave the process (issue 2 "Bad input ... never a stack trace").
  app.setErrorHandler((error, request, reply) => {
    const status = typeof (error as { statusCode?: unknown }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return reply.code(500).type('text/plain; charset=utf-8').send(`Internal error; quote request id ${request.id} to the operator`);
    }
    return reply.code(status).type('text/plain; charset=utf-8').send(error instanceof Error ? error.message : 'Bad request');
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).type('text/plain; charset=utf-8').send(`Not found: ${request.method} ${request.url.split('?', 1)[0] ?? ''}`),
  );

  const endpoints = serviceEndpoints(services.catalogue, { reg: config.regNamespace, bespoke: config.bespokeNamespace });
  const xmlOptions = { endpoints, pipeline: services.pipeline, baseUrl: config.baseUrl, bodyLimit: config.xmlBodyLimit };
  await app.register(jsonPlugin, { pipeline: services.pipeline, realm: config.authRealm, baseUrl: config.baseUrl });
  await app.register(soapPlugin, xmlOptions);
  await app.register(asmxHttpPlugin, xmlOptions);
  await app.register(wsdlPlugin, { endpoints, baseUrl: config.baseUrl });
  await app.register(imagePlugin, { imagesDir: config.imagesDir });
  if (config.getCreditsEnabled) await app.register(creditsPlugin, { accounts: services.accounts });
  await app.register(opsPlugin, { storage, metrics, isDraining: () => draining });
  // The admin and self-service API (issue 16).
  const adminOptions = { accounts: services.accounts, users: new UserService(storage.db, options.clock ?? systemClock, services.audit, services.accounts), audit: services.audit, db: storage.db, clock: options.clock ?? systemClock, baseUrl: config.baseUrl, openApi: new OpenApiCollector() };
  await app.register(adminApiPlugin, { ...adminOptions, prefix: '/admin/api' });
  await app.register(accountApiPlugin, { ...adminOptions, prefix: '/account/api' });
  await app.register(consolePlugin, { ...adminOptions, services: endpoints.map((e) => ({ name: e.definition.serviceName, path: e.definition.path })) });

  if (!options.storage) app.addHook('onClose', async () => storage.close());

  return {
    app,
    services,
    metrics,
    drain: () => {
      draining = true;
    },
  };
}
