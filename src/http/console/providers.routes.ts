import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProvidersView } from '../../providers/upstream/providers-view.js';
import type { Principal } from '../auth/api-auth.js';
import type { Viewer } from './layout.js';
import { providersPage } from './providers-page.js';

export interface ProviderPagesDeps {
  readonly signIn: (request: FastifyRequest, audience: 'operator') => Promise<{ principal: Principal; viewer: Viewer }>;
  /** The redirect to the password page when the user must change it first, else undefined. */
  readonly passwordFirst: (viewer: Viewer, reply: FastifyReply) => FastifyReply | undefined;
  readonly render: (reply: FastifyReply, body: string) => FastifyReply;
  readonly providers: Pick<ProvidersView, 'view'>;
}

/** `GET /console/admin/providers`: the admin API's `GET /admin/api/providers` as a page. */
export function registerProviderPages(app: FastifyInstance, deps: ProviderPagesDeps): void {
  app.get('/console/admin/providers', async (request, reply) => {
    const { viewer } = await deps.signIn(request, 'operator');
    return deps.passwordFirst(viewer, reply) ?? deps.render(reply, providersPage(viewer, await deps.providers.view()));
  });
}
