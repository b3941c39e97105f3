import type { FastifyPluginAsync } from 'fastify';
import type { UserService } from '../../users/user.service.js';
import { actorOf, ApiError, requireWrite } from '../auth/api-auth.js';
import { principalOf } from '../auth/api-principal.js';
import { idParams, tokenCreateBody } from './api-schemas.js';
import { adminAnswers } from './api-responses.js';

const TAG = 'admin: operators';

/** Operator API tokens (`Authorization: Bearer`), under `/tokens`; the console's Tokens page makes the same calls. */
export const tokensRoutes: FastifyPluginAsync<{ readonly users: UserService }> = (app, options) => {
  app.get('', { schema: { tags: [TAG], summary: 'Operator API tokens (never their secrets)', response: { 200: adminAnswers.tokens } } }, async () => ({ tokens: await options.users.tokens() }));

  app.post<{ Body: { name: string; scope: 'read' | 'write' } }>(
    '',
    { schema: { tags: [TAG], summary: 'Create an operator API token (Authorization: Bearer); shown this once', access: 'An admin, logged in (with X-CSRF-Token); not another token.', body: tokenCreateBody, response: { 201: adminAnswers.createdToken } } },
    async (request, reply) => {
      const principal = principalOf(request);
      requireWrite(principal);
      if (principal.via !== 'session') throw new ApiError(403, 'forbidden', 'tokens are created by a logged-in admin, not by another token');
      const { token, secret } = await options.users.withActor(actorOf(principal, request)).createToken(principal.user, request.body.name, request.body.scope);
      return reply.code(201).header('cache-control', 'no-store').send({ token, secret });
    },
  );

  app.post<{ Params: { id: number } }>('/:id/revoke', { schema: { tags: [TAG], summary: 'Revoke an operator token at once', params: idParams, response: { 200: adminAnswers.token } } }, async (request) => {
    const principal = principalOf(request);
    requireWrite(principal);
    return { token: await options.users.withActor(actorOf(principal, request)).revokeToken(request.params.id) };
  });
  return Promise.resolve();
};
