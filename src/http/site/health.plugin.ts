import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import { upstreamLogListener } from '../../providers/upstream/upstream-log.js';
import type { Storage } from '../../storage/create-database.js';
import type { Metrics } from '../../ops/metrics.js';

export interface OpsPluginOptions {
  readonly storage: Storage;
  readonly metrics: Metrics;
  /** Set while shutting down, so load balancers stop sending traffic before we close. */
  readonly isDraining: () => boolean;
  /** When set, /metrics requires `Authorization: Bearer <token>` (METRICS_TOKEN). */
  readonly metricsToken?: string | undefined;
}

/**
 * Whether an Authorization header carries the bearer token (RFC 6750 section 2.1). Both sides
 * are hashed first, so the comparison takes the same time whatever the length or the first
 * differing character.
 */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^bearer +(\S+) *$/i.exec(header ?? '');
  if (!match?.[1]) return false;
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]), digest(token));
}

/**
 * `/healthz` (the process answers), `/readyz` (it can serve lookups), `/metrics` (Prometheus).
 * /readyz also reports each upstream provider (`providers`); an upstream that is down does not make
 * the instance unready, since local data and other operations still work and every instance
 * would fail alike. /metrics may require a bearer token (METRICS_TOKEN). This plugin also sends
 * upstream events to the app's log.
 */
export const opsPlugin: FastifyPluginAsync<OpsPluginOptions> = (app, options) => {
  options.metrics.upstream.subscribe(upstreamLogListener(app.log));

  app.get('/healthz', () => ({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    if (options.isDraining()) return reply.code(503).send({ status: 'draining' });
    try {
      await sql`select 1`.execute(options.storage.db);
      return { status: 'ready', storage: { engine: options.storage.engine, status: 'up' }, providers: options.metrics.upstream.snapshot() };
    } catch (error) {
      request.log.error({ err: error }, 'readiness check: storage is down');
      return reply.code(503).send({ status: 'not ready', storage: { engine: options.storage.engine, status: 'down' }, providers: options.metrics.upstream.snapshot() });
    }
  });

  // Metrics tell a stranger the traffic, the accounts' activity by operation and the upstreams'
  // state (issue 17 item 11): with METRICS_TOKEN only a scraper that sends it reads them.
  const token = options.metricsToken;
  app.get('/metrics', async (request, reply) => {
    if (token !== undefined && !bearerMatches(request.headers.authorization, token)) {
      return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').type('text/plain; charset=utf-8').send('A bearer token is required for /metrics');
    }
    const text = await options.metrics.registry.metrics();
    return reply.type(options.metrics.registry.contentType).send(text);
  });
  return Promise.resolve();
};
