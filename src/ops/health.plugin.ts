import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import { upstreamLogListener } from '../providers/upstream/upstream-log.js';
import type { Storage } from '../storage/create-database.js';
import type { Metrics } from './metrics.js';

export interface OpsPluginOptions {
  readonly storage: Storage;
  readonly metrics: Metrics;
  /** Set while shutting down, so load balancers stop sending traffic before we close. */
  readonly isDraining: () => boolean;
}

/**
 * `/healthz` (the process answers), `/readyz` (it can serve lookups), `/metrics` (Prometheus).
 * /readyz also reports each upstream provider (`providers`); an upstream that is down does not make
 * the instance unready, since local data and other operations still work and every instance
 * would fail alike. This plugin also sends upstream events to the app's log.
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

  app.get('/metrics', async (_request, reply) => {
    const text = await options.metrics.registry.metrics();
    return reply.type(options.metrics.registry.contentType).send(text);
  });
  return Promise.resolve();
};
