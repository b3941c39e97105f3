import type { FastifyInstance } from 'fastify';
import type { ProvidersView } from '../../providers/upstream/providers-view.js';

export interface ProviderRouteDeps {
  readonly providers: Pick<ProvidersView, 'view'>;
}

/**
 * `GET /admin/api/providers`: every upstream provider's state as /readyz reports it (this
 * instance), its balance where it has one (the original service's, read about once a minute),
 * and its spend over every instance: calls today and over 30 days by outcome and operation, and
 * the answers the cache gave instead (`creditsSaved`). Registered inside the admin API's scope, so
 * its login, role and rate-limit hooks apply; reading needs no write role.
 */
export function registerProviderRoutes(app: FastifyInstance, deps: ProviderRouteDeps): void {
  app.get(
    '/providers',
    { schema: { tags: ['admin: operations'], summary: "The upstream providers: status as /readyz shows it, the balance at a paid upstream, and calls and cache answers today and over 30 days" } },
    async () => ({ providers: await deps.providers.view() }),
  );
}
