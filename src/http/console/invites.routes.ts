import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify';
import { SESSION_TTL_MS, UserError, type Invitation, type UserService } from '../../users/user.service.js';
import { sessionCookie } from '../auth/api-auth.js';
import { INVITE_FORM } from '../auth/form-token.js';
import { inviteBody, object, PASSWORD } from '../api/api-schemas.js';
import type { ConsolePageOptions } from './console-context.js';
import { formErrorOf, type FormError } from './form-errors.js';
import { inviteAcceptPage, inviteCodePage, inviteGonePage } from './invite-pages.js';
import { CSRF_FIELD } from './layout.js';

export interface InvitePagesOptions extends ConsolePageOptions {
  readonly users: UserService;
  /** This prefix also takes the forms (`/console/invite`); the other only shows the first (`/account/invite`). */
  readonly accepts: boolean;
}

const inviteProperties = (inviteBody as { properties: Record<string, Record<string, unknown>> }).properties;
/** The first step: the code alone. */
const openBody = object({ token: inviteProperties.token ?? {} }, ['token']);
/** The API's acceptance (token, password) and the password typed again. */
const acceptBody = object({ ...inviteProperties, confirm: PASSWORD }, ['token', 'password', 'confirm']);

/**
 * The invitation pages (issue 26 item 11). The admin API's invite links point at
 * /account/invite#TOKEN, operators' at /console/invite#TOKEN: the plugin is registered under both.
 * The first step takes the code (console.js sends it from the fragment) and shows whose invitation
 * it is: the account and the user name. The second sets the password, typed twice, and logs the
 * invitee in, as sign-up does. Both forms carry the invite form's anti-forgery token; the code
 * works once (UserService.acceptInvite); a used, expired or unknown code gets a page that says so.
 */
export const invitePages: FastifyPluginAsync<InvitePagesOptions> = (app, options) => {
  const { ctx, users } = options;
  app.get('', (request, reply) => ctx.render(reply, inviteCodePage({ formToken: INVITE_FORM.issue(request, reply) })));
  if (!options.accepts) return Promise.resolve();

  /** The page of an invitation that cannot be accepted: 404 unknown, 410 used or expired. */
  const gone = (reply: FastifyReply, invitation: Invitation | undefined) => ctx.render(reply, inviteGonePage(invitation), invitation === undefined ? 404 : 410);

  app.post<{ Body: { token?: string; [CSRF_FIELD]?: string } }>('/open', { schema: { body: ctx.formOf(openBody) }, attachValidation: true }, async (request, reply) => {
    const formToken = INVITE_FORM.check(request, request.body[CSRF_FIELD]);
    const refused = formErrorOf('open', request.body, request.validationError as FastifyError | undefined);
    const token = request.body.token;
    if (refused || token === undefined) return ctx.render(reply, inviteCodePage({ formToken, error: refused }), 400);
    const invitation = await users.invitation(token);
    if (invitation?.state !== 'open') return gone(reply, invitation);
    return ctx.render(reply, inviteAcceptPage({ formToken, token, invitation }));
  });

  app.post<{ Body: { token?: string; password?: string; confirm?: string; [CSRF_FIELD]?: string } }>('', { schema: { body: ctx.formOf(acceptBody) }, attachValidation: true }, async (request, reply) => {
    // Refused before anything is looked up: a forged post learns nothing.
    const formToken = INVITE_FORM.check(request, request.body[CSRF_FIELD]);
    const { token, password, confirm } = request.body;
    const invitation = token === undefined || token.length > 100 ? undefined : await users.invitation(token);
    if (token === undefined || invitation?.state !== 'open') return gone(reply, invitation);
    const again = (error: FormError) => ctx.render(reply, inviteAcceptPage({ formToken, token, invitation, error }), 400);
    const refused = formErrorOf('accept', request.body, request.validationError as FastifyError | undefined);
    if (refused) return again(refused);
    if (password !== confirm) return again({ form: 'accept', field: 'confirm', text: 'The two passwords differ: type the same password in both fields.', values: {} });
    let user;
    try {
      user = await users.withActor({ kind: invitation.user.accountId === null ? 'operator' : 'customer', name: 'invitee', address: request.ip }).acceptInvite(token, password ?? '');
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      // Used a moment ago by another tab: its page says so.
      if (error.code === 'NOT_FOUND') return gone(reply, await users.invitation(token));
      return again({ form: 'accept', field: 'password', text: `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`, values: {} });
    }
    // Logged in at once, as after sign-up: the invitee chose this password a moment ago.
    const session = await users.startSession(user, request.ip);
    void reply.header('set-cookie', [sessionCookie(request, session.sessionId, SESSION_TTL_MS / 1000), INVITE_FORM.cleared(request)]);
    return reply.redirect(user.accountId === null ? '/console/admin' : '/console/account?joined=1', 303);
  });
  return Promise.resolve();
};
