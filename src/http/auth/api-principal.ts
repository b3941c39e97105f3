import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UserService } from '../../users/user.service.js';
import { ApiError, authenticate, checkAccess, type Principal, type RouteAccess } from './api-auth.js';

const principals = new WeakMap<FastifyRequest, Principal>();

/** The caller the API's preHandler authenticated (requireAuth); 401 on a route marked public. */
export function principalOf(request: FastifyRequest): Principal {
  const principal = principals.get(request);
  if (!principal) throw new ApiError(401, 'unauthorized', 'log in first');
  return principal;
}

/**
 * Authentication and the access rule (checkAccess) for every route of the scope not marked public
 * (`config: { public: true }`), before the body is parsed: a caller who may not make a change is
 * refused whatever it sends.
 */
export function requireAuth(app: FastifyInstance, users: UserService, audience: 'operator' | 'customer'): void {
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.config as RouteAccess;
    if (request.is404 || route.public === true) return;
    const principal = await authenticate(request, users, audience);
    checkAccess(principal, request.method, route);
    principals.set(request, principal);
  });
}
