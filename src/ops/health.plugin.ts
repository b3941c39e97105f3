import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import type { Storage } from '../storage/create-database.js';
import type { Metrics } from './metrics.js';

export interface OpsPluginOptions {
  readonly storage: Storage;
  readonly metrics: Metrics;
  /** Set while shutting down, so load balancers stop sending traffic before we close. */
  readonly isDraining: () => boolean;
}

/** `/healthz` (the process answers), `/readyz` (it can serve lookups), `/metrics` (Prometheus). */
export const opsPlugin: FastifyPluginAsync<OpsPluginOptions> = (app, options) => {
  app.get('/healthz', () => ({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    if (options.isDraining()) return reply.code(503).send({ status: 'draining' });
    try {
      await sql`select 1`.execute(options.storage.db);
      return { status: 'ready', storage: { engine: options.storage.engine, status: 'up' } };
    } catch (error) {
      request.log.error({ err: error }, 'readiness check: storage is down');
      return reply.code(503).send({ status: 'not ready', storage: { engine: options.storage.engine, status: 'down' } });
    }
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await options.metrics.registry.metrics();
    return reply.type(options.metrics.registry.contentType).send(text);
  });
  return Promise.resolve();
};
