import type { FastifyPluginAsync } from 'fastify';
import type { ProvidersView } from '../../providers/upstream/providers-view.js';
import type { ConsolePageOptions } from './console-context.js';
import { providersPage } from './providers-page.js';

export interface ProviderPagesOptions extends ConsolePageOptions {
  readonly providers: Pick<ProvidersView, 'view' | 'order'>;
}

/** `GET /console/admin/providers` (registered with that prefix): the admin API's `GET /admin/api/providers` as a page. */
export const providerPages: FastifyPluginAsync<ProviderPagesOptions> = (app, deps) => {
  const { ctx } = deps;
  app.get('', async (request, reply) => {
    const { viewer } = await ctx.signIn(request, 'operator');
    return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, providersPage(viewer, await deps.providers.view(), deps.providers.order()));
  });
  return Promise.resolve();
};
