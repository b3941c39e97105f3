import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UserService } from '../../users/user.service.js';
import { ApiError, authenticate, type Principal } from './api-auth.js';

const principals = new WeakMap<FastifyRequest, Principal>();

/** The caller the API's preHandler authenticated (requireAuth); 401 on a route marked public. */
export function principalOf(request: FastifyRequest): Principal {
  const principal = principals.get(request);
  if (!principal) throw new ApiError(401, 'unauthorized', 'log in first');
  return principal;
}

/** Authentication for every route of the scope not marked public (`config: { public: true }`). */
export function requireAuth(app: FastifyInstance, users: UserService, audience: 'operator' | 'customer'): void {
  app.addHook('preHandler', async (request) => {
    if (request.is404 || (request.routeOptions.config as { public?: boolean }).public === true) return;
    principals.set(request, await authenticate(request, users, audience));
  });
}
