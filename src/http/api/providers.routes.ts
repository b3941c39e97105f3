import type { FastifyPluginAsync } from 'fastify';
import type { ProviderStatus } from '../../providers/upstream/upstream-monitor.js';

/** The upstream providers' status, as /readyz shows it, under `/providers`. */
export const providersRoutes: FastifyPluginAsync<{ readonly providers: () => Record<string, ProviderStatus> }> = (app, options) => {
  app.get('', { schema: { tags: ['admin: operations'], summary: "The upstream providers' status, as /readyz shows it" } }, () => ({ providers: options.providers() }));
  return Promise.resolve();
};
