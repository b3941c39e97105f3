import type { FastifyError, FastifyPluginAsync } from 'fastify';
import type { UserService } from '../../users/user.service.js';
import { actorOf, requireWrite } from '../auth/api-auth.js';
import { userInviteBody, usernameParams } from '../api/api-schemas.js';
import { operatorAccountHtml, type OperatorAccountDeps } from './accounts.routes.js';
import type { ConsolePageOptions } from './console-context.js';
import { formErrorOf } from './form-errors.js';
import { inviteCreatedPage } from './operator-pages.js';

/**
 * Inviting a customer user of an account, under `/console/admin/accounts/:username/users`: the page
 * shows the one-time link. A refused name (too long, a space, taken) shows the account page again
 * with the message at the field and the name kept (issue 26 item 10).
 */
export const userPages: FastifyPluginAsync<ConsolePageOptions & OperatorAccountDeps & { readonly users: UserService }> = (app, options) => {
  const { ctx } = options;
  app.post<{ Params: { username: string }; Body: { name: string; role: 'owner' | 'member' } }>(
    '',
    { schema: { params: usernameParams, body: ctx.formOf(userInviteBody) }, attachValidation: true },
    async (request, reply) => {
      const { principal, viewer } = await ctx.signIn(request, 'operator');
      requireWrite(principal);
      const { username } = request.params;
      let created;
      try {
        if (request.validationError) throw request.validationError;
        created = await options.users.withActor(actorOf(principal, request)).createCustomer(username, request.body.name, request.body.role);
      } catch (thrown) {
        const error = formErrorOf('user', request.body, request.validationError as FastifyError | undefined, thrown);
        if (!error) throw thrown;
        // The service refuses only the name (taken, or not a user name): its message goes by that field.
        return ctx.render(reply, await operatorAccountHtml(options, viewer, username, {}, { error: { ...error, field: error.field ?? 'name' } }), 400);
      }
      const inviteUrl = `${ctx.baseUrl(request)}/account/invite#${created.inviteToken}`;
      return ctx.render(reply, inviteCreatedPage(viewer, { username, user: created.user.name, inviteUrl }), 201);
    },
  );
  return Promise.resolve();
};
