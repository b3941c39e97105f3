import type { FastifyPluginAsync } from 'fastify';
import { UserError, type UserService } from '../../users/user.service.js';
import { INVITE_FORM } from '../auth/form-token.js';
import { inviteBody } from '../api/api-schemas.js';
import { invitePage } from './auth-pages.js';
import type { ConsolePageOptions } from './console-context.js';
import { CSRF_FIELD } from './layout.js';

export interface InvitePagesOptions extends ConsolePageOptions {
  readonly users: UserService;
  /** This prefix also takes the form (`/console/invite`); the other only shows it (`/account/invite`). */
  readonly accepts: boolean;
}

/**
 * The invite page, where an invited user sets a password. The admin API's invite links point at
 * /account/invite#TOKEN, operators' at /console/invite#TOKEN: the plugin is registered under both,
 * and the form posts to /console/invite.
 */
export const invitePages: FastifyPluginAsync<InvitePagesOptions> = (app, options) => {
  const { ctx, users } = options;
  app.get('', (request, reply) => ctx.render(reply, invitePage({ formToken: INVITE_FORM.issue(request, reply) })));
  if (!options.accepts) return Promise.resolve();

  app.post<{ Body: { token: string; password: string; [CSRF_FIELD]?: string } }>('', { schema: { body: ctx.formOf(inviteBody) } }, async (request, reply) => {
    const formToken = INVITE_FORM.check(request, request.body[CSRF_FIELD]);
    try {
      await users.withActor({ kind: 'customer', name: 'invitee', address: request.ip }).acceptInvite(request.body.token, request.body.password);
    } catch (error) {
      if (error instanceof UserError) return ctx.render(reply, invitePage({ formToken, error: error.message, token: request.body.token }), error.code === 'NOT_FOUND' ? 404 : 400);
      throw error;
    }
    void reply.header('set-cookie', INVITE_FORM.cleared(request));
    return reply.redirect('/console/login?accepted=1', 303);
  });
  return Promise.resolve();
};
