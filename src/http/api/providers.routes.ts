import type { FastifyPluginAsync } from 'fastify';
import type { ProvidersView } from '../../providers/upstream/providers-view.js';
import { adminAnswers } from './api-responses.js';

/**
 * `GET /admin/api/providers` (registered under `/providers`): every upstream provider's state as
 * /readyz reports it (this instance), its balance where it has one (the original service's, read
 * about once a minute), and its spend over every instance: calls today and over 30 days by outcome
 * and operation, and the answers the cache gave instead (`creditsSaved`); and `order`, the paid
 * upstreams in the order the router asks them now.
 */
export const providersRoutes: FastifyPluginAsync<{ readonly providers: Pick<ProvidersView, 'view' | 'order'> }> = (app, options) => {
  app.get(
    '',
    { schema: { tags: ['admin: operations'], summary: 'The upstream providers: status as /readyz shows it, the balance at a paid upstream, and calls and cache answers today and over 30 days', response: { 200: adminAnswers.providers } } },
    async () => ({ providers: await options.providers.view(), order: options.providers.order() }),
  );
  return Promise.resolve();
};
