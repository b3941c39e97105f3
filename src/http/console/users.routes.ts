import type { FastifyPluginAsync } from 'fastify';
import type { UserService } from '../../users/user.service.js';
import { actorOf, requireWrite } from '../auth/api-auth.js';
import { userInviteBody, usernameParams } from '../api/api-schemas.js';
import type { ConsolePageOptions } from './console-context.js';
import { inviteCreatedPage } from './operator-pages.js';

/** Inviting a customer user of an account, under `/console/admin/accounts/:username/users`: the page shows the one-time link. */
export const userPages: FastifyPluginAsync<ConsolePageOptions & { readonly users: UserService }> = (app, options) => {
  const { ctx } = options;
  app.post<{ Params: { username: string }; Body: { name: string; role: 'owner' | 'member' } }>(
    '',
    { schema: { params: usernameParams, body: ctx.formOf(userInviteBody) } },
    async (request, reply) => {
      const { principal, viewer } = await ctx.signIn(request, 'operator');
      requireWrite(principal);
      const { user, inviteToken } = await options.users.withActor(actorOf(principal, request)).createCustomer(request.params.username, request.body.name, request.body.role);
      const inviteUrl = `${ctx.baseUrl(request)}/account/invite#${inviteToken}`;
      return ctx.render(reply, inviteCreatedPage(viewer, { username: request.params.username, user: user.name, inviteUrl }), 201);
    },
  );
  return Promise.resolve();
};
