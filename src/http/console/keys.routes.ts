import type { FastifyError, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { formErrorOf, type FormError } from './form-errors.js';
import type { AccountService } from '../../accounts/account.service.js';
import { actorOf, requireWrite, type Principal } from '../auth/api-auth.js';
import { int, keyCreateBody, object, USERNAME, usernameParams } from '../api/api-schemas.js';
import { secretShown } from './account-sections.js';
import type { Audience, ConsolePageOptions } from './console-context.js';
import { html } from './html.js';
import { page, type Viewer } from './layout.js';

export interface KeyPagesOptions extends ConsolePageOptions {
  readonly accounts: AccountService;
  readonly audience: Audience;
  /** The account's username: the session's own (customers) or the path's (operators). */
  readonly account: (principal: Principal, request: FastifyRequest) => Promise<string>;
  /** The account's page, where the forms are and the pages link back to. */
  readonly back: (username: string) => string;
  /** The account's page with the key form shown again with its error (issue 26 item 3). */
  readonly formPage: (viewer: Viewer, username: string, error: FormError) => Promise<string>;
}

const ID = int(1, 2 ** 31 - 1);

/**
 * Create, roll and revoke keys, under `{account}/keys`: the same service calls as the API's key
 * routes (src/http/api/keys.routes.ts); registered for the customer's own account and for any
 * account on the operator side.
 */
export const keyPages: FastifyPluginAsync<KeyPagesOptions> = (app, options) => {
  const { ctx, audience } = options;
  const accountParams = audience === 'operator' ? { params: usernameParams } : {};
  const params = audience === 'operator' ? object({ username: USERNAME, id: ID }, ['username', 'id']) : object({ id: ID }, ['id']);
  const service = (principal: Principal, request: FastifyRequest) => options.accounts.withActor(actorOf(principal, request));

  app.post<{ Body: { name: string } }>('', { schema: { ...accountParams, body: ctx.formOf(keyCreateBody) }, attachValidation: true }, async (request, reply) => {
    const { principal, viewer } = await ctx.signIn(request, audience);
    requireWrite(principal);
    const username = await options.account(principal, request);
    let created;
    try {
      if (request.validationError) throw request.validationError;
      created = await service(principal, request).createKey(username, request.body.name);
    } catch (thrown) {
      const error = formErrorOf('key', request.body, request.validationError as FastifyError | undefined, thrown);
      if (!error) throw thrown;
      return ctx.render(reply, await options.formPage(viewer, username, error), 400);
    }
    const { key, apiKey } = created;
    return ctx.render(reply, page(`Key ${key.name} created`, secretShown(`The new key ${key.name} works now.`, username, apiKey, ctx.baseUrl(request), options.back(username)), viewer), 201);
  });
  app.post<{ Params: { id: number } }>('/:id/roll', { schema: { params, body: ctx.form({}) } }, async (request, reply) => {
    const { principal, viewer } = await ctx.signIn(request, audience);
    requireWrite(principal);
    const username = await options.account(principal, request);
    const rolled = await service(principal, request).rollKey(username, request.params.id);
    const until = rolled.old.expiresAt === null ? '' : ` until ${rolled.old.expiresAt.slice(0, 16).replace('T', ' ')} UTC`;
    return ctx.render(reply, page(`Key ${rolled.key.name} rolled`, html`${secretShown(`This is the new key. The old one keeps working${until}, so clients can switch over.`, username, rolled.apiKey, ctx.baseUrl(request), options.back(username))}`, viewer));
  });
  app.post<{ Params: { id: number } }>('/:id/revoke', { schema: { params, body: ctx.form({}) } }, async (request, reply) => {
    const { principal } = await ctx.signIn(request, audience);
    requireWrite(principal);
    const username = await options.account(principal, request);
    await service(principal, request).revokeKey(username, request.params.id);
    return reply.redirect(`${options.back(username)}${audience === 'operator' ? '?done=revoked' : ''}`, 303);
  });
  return Promise.resolve();
};
