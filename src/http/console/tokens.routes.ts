import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { formErrorOf } from './form-errors.js';
import { actorOf, ApiError, requireWrite } from '../auth/api-auth.js';
import { idParams, object, str, tokenCreateBody } from '../api/api-schemas.js';
import type { UserService } from '../../users/user.service.js';
import type { ConsolePageOptions } from './console-context.js';
import { tokenCreatedPage, TOKENS_PATH, tokensPage } from './token-pages.js';

const DONE: Readonly<Record<string, string>> = { revoked: 'The token is revoked.' };

/** Operator API tokens in the console (issue 18), under TOKENS_PATH: the same UserService calls as `/admin/api/tokens`. */
export const tokenPages: FastifyPluginAsync<ConsolePageOptions & { readonly users: UserService }> = (app, options) => {
  const { ctx, users } = options;
  app.get<{ Querystring: { done?: string } }>('', { schema: { querystring: object({ done: str(32) }) } }, async (request, reply) => {
    const { viewer } = await ctx.signIn(request, 'operator');
    const notice = request.query.done === undefined ? undefined : DONE[request.query.done];
    return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, tokensPage(viewer, { tokens: await users.tokens(), notice }));
  });

  app.post<{ Body: { name: string; scope: 'read' | 'write' } }>(
    '',
    { schema: { body: ctx.formOf(tokenCreateBody) }, attachValidation: true },
    async (request, reply) => {
      const { principal, viewer } = await ctx.signIn(request, 'operator');
      requireWrite(principal);
      // As the API: a logged-in admin creates tokens, never another token (the console is session-only anyway).
      if (principal.via !== 'session') throw new ApiError(403, 'forbidden', 'Tokens are created by a logged-in admin.');
      let created;
      try {
        if (request.validationError) throw request.validationError;
        created = await users.withActor(actorOf(principal, request)).createToken(principal.user, request.body.name, request.body.scope);
      } catch (thrown) {
        // A refused name (too long, taken) comes back at its field, typed values kept (issue 26 item 10).
        const error = formErrorOf('token', request.body, request.validationError as FastifyError | undefined, thrown);
        if (!error) throw thrown;
        return ctx.render(reply, tokensPage(viewer, { tokens: await users.tokens(), error: { ...error, field: error.field ?? 'name' } }), 400);
      }
      const { token, secret } = created;
      return ctx.render(reply, tokenCreatedPage(viewer, { token, secret, baseUrl: ctx.baseUrl(request) }), 201);
    },
  );

  app.post<{ Params: { id: number } }>('/:id/revoke', { schema: { params: idParams, body: ctx.form({}) } }, async (request, reply) => {
    const { principal } = await ctx.signIn(request, 'operator');
    requireWrite(principal);
    await users.withActor(actorOf(principal, request)).revokeToken(request.params.id);
    return reply.redirect(`${TOKENS_PATH}?done=revoked`, 303);
  });
  return Promise.resolve();
};
