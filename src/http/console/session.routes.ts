import type { FastifyError, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { SignupConfig } from '../../config/config.js';
import type { Clock } from '../../shared/clock.js';
import type { Throttles } from '../../users/login-throttle.js';
import { UserError, type User, type UserService } from '../../users/user.service.js';
import { actorOf, ApiError, clearCookie, login, readCookie, SESSION_COOKIE } from '../auth/api-auth.js';
import { LOGIN_FORM } from '../auth/form-token.js';
import { object, PASSWORD, passwordBody, str } from '../api/api-schemas.js';
import { formErrorOf, plainValidationError, typedValues, type FormError } from './form-errors.js';
import { loginPage, passwordPage } from './auth-pages.js';
import type { Audience, ConsolePageOptions } from './console-context.js';
import { CSRF_FIELD } from './layout.js';
import { loginPath, MAX_RETURN_PATH, NEXT_FIELD, safeReturnPath, withNext } from './return-path.js';
import { forgetSession, loginAfterRefusal, rememberEndedEverywhere, rememberSession, SESSION_END_NOTICES, sessionEndOf } from './session-end.js';

export const LOGOUT_EVERYWHERE_PATH = '/console/logout-everywhere';

export interface SessionPagesOptions extends ConsolePageOptions {
  readonly users: UserService;
  readonly throttles: Throttles;
  readonly signup: SignupConfig;
  /** The store's clock: whether the session a browser last had has expired. */
  readonly clock: Clock;
}

/** The user's home: the overview for operators, the account page for customers. */
const homeOf = (user: Pick<User, 'accountId'>): string => (user.accountId === null ? '/console/admin' : '/console/account');

/**
 * Where a user goes after logging in: the page asked for (a safe console path, return-path.ts) when
 * it is one of the user's side of the console, else the user's home. An operator's link opened by
 * a customer (or the other way round) would only answer "Not allowed".
 */
function returnTarget(user: Pick<User, 'accountId'>, next: string | undefined): string {
  const target = safeReturnPath(next);
  if (target === undefined) return homeOf(user);
  const side = (prefix: string) => target === prefix || target.startsWith(`${prefix}/`) || target.startsWith(`${prefix}?`);
  if (side(user.accountId === null ? '/console/account' : '/console/admin')) return homeOf(user);
  return target;
}

const NEXT = { type: 'string', maxLength: MAX_RETURN_PATH } as const;

/** The API's password change (current, new) and the new one typed again, and the page to go on to. */
const passwordForm = object({ ...(passwordBody as { properties: Record<string, Record<string, unknown>> }).properties, confirm: PASSWORD, [NEXT_FIELD]: NEXT }, ['currentPassword', 'newPassword', 'confirm']);

/**
 * Logging in and out, under `/console`: the login page, logout, "log out everywhere" (the same call
 * as the APIs' `/logout-everywhere`; sessions live in the store, so one delete ends them on every
 * instance at once, src/users/user.service.ts), and the password page.
 */
export const sessionPages: FastifyPluginAsync<SessionPagesOptions> = (app, options) => {
  const { ctx, users } = options;
  /** The session of the request's cookie, if it is a live one. */
  const sessionOf = async (request: FastifyRequest) => {
    const sessionId = readCookie(request, SESSION_COOKIE);
    const session = sessionId === undefined ? undefined : await users.session(sessionId);
    return session && sessionId !== undefined ? { sessionId, session } : undefined;
  };
  const audienceOf = (accountId: number | null): Audience => (accountId === null ? 'operator' : 'customer');

  app.get('', async (request, reply) => {
    const found = await sessionOf(request);
    if (!found) return reply.redirect(loginPath({ reason: sessionEndOf(request, options.clock.now()) }), 303);
    return reply.redirect(homeOf(found.session.user), 303);
  });

  app.get<{ Querystring: { accepted?: string; ended?: string; session?: 'ended' | 'expired'; next?: string } }>(
    '/login',
    { schema: { querystring: object({ accepted: str(1), ended: str(1), session: { type: 'string', enum: ['ended', 'expired'] }, [NEXT_FIELD]: NEXT }) } },
    (request, reply) => {
      const { accepted, ended, session } = request.query;
      const notice = accepted ? 'Your password is set. Log in with it.' : ended ? 'Every session of yours has ended, on every device.' : session ? SESSION_END_NOTICES[session] : undefined;
      return ctx.render(reply, loginPage({ formToken: LOGIN_FORM.issue(request, reply), signup: options.signup.enabled, notice, next: safeReturnPath(request.query.next) }));
    },
  );

  app.post<{ Body: { username: string; password: string; next?: string; [CSRF_FIELD]?: string } }>('/login', { schema: { body: ctx.form({ username: str(200), password: PASSWORD, [NEXT_FIELD]: NEXT }, ['username', 'password']) }, attachValidation: true }, async (request, reply) => {
    // Refused before the password is looked at: a forged login counts against no throttle either.
    const formToken = LOGIN_FORM.check(request, request.body[CSRF_FIELD]);
    // A value no login can have (over-long, missing) is said on the login page, the name kept (issue 26 item 10).
    if (request.validationError) {
      const { text } = plainValidationError(request.validationError as FastifyError, typedValues(request.body));
      return ctx.render(reply, loginPage({ formToken, error: text, username: request.body.username, signup: options.signup.enabled, next: safeReturnPath(request.body.next) }), 400);
    }
    // Operators and customers share the login page; the user's kind picks the audience.
    const known = await users.findByName(request.body.username);
    const audience: Audience = known?.accountId === null ? 'operator' : 'customer';
    const next = safeReturnPath(request.body.next);
    let user;
    let expiresAt;
    try {
      ({ user, expiresAt } = await login(request, reply, users, options.throttles.login, audience));
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return ctx.render(reply, loginPage({ formToken, error: 'Wrong user name or password.', username: request.body.username, signup: options.signup.enabled, next }), 401);
      throw error;
    }
    void reply.header('set-cookie', LOGIN_FORM.cleared(request));
    rememberSession(request, reply, expiresAt);
    // The page asked for while logged out, after the one-time password is replaced if it must be.
    const target = returnTarget(user, next);
    if (user.mustChangePassword) return reply.redirect(target === homeOf(user) ? '/console/password' : withNext('/console/password', target), 303);
    return reply.redirect(target, 303);
  });

  app.post('/logout', { schema: { body: ctx.form({}) } }, async (request, reply) => {
    const found = await sessionOf(request);
    if (found) {
      await ctx.signIn(request, audienceOf(found.session.user.accountId));
      await users.endSession(found.sessionId);
    }
    clearCookie(request, reply);
    forgetSession(request, reply);
    return reply.redirect('/console/login', 303);
  });

  app.post('/logout-everywhere', { schema: { body: ctx.form({}) } }, async (request, reply) => {
    const found = await sessionOf(request);
    if (found) {
      // A viewer or member may end its own sessions: it changes nothing but the user's own logins.
      const { principal } = await ctx.signIn(request, audienceOf(found.session.user.accountId));
      await users.withActor(actorOf(principal, request)).endAllSessions(principal.user);
    }
    clearCookie(request, reply);
    rememberEndedEverywhere(request, reply);
    return reply.redirect('/console/login?ended=1', 303);
  });

  app.get<{ Querystring: { changed?: string; next?: string } }>('/password', { schema: { querystring: object({ changed: str(1), [NEXT_FIELD]: NEXT }) } }, async (request, reply) => {
    const found = await sessionOf(request);
    if (!found) return reply.redirect(loginAfterRefusal(request, options.clock.now()), 303);
    const { viewer } = await ctx.signIn(request, audienceOf(found.session.user.accountId));
    const next = safeReturnPath(request.query.next);
    return ctx.render(reply, passwordPage(viewer, { required: viewer.user.mustChangePassword, changed: request.query.changed !== undefined && !viewer.user.mustChangePassword, next }));
  });

  // The new password is typed twice (issue 26 item 11); a refused value comes back at its field.
  app.post<{ Body: { currentPassword?: string; newPassword?: string; confirm?: string; next?: string } }>(
    '/password',
    { schema: { body: ctx.formOf(passwordForm) }, attachValidation: true },
    async (request, reply) => {
      const found = await sessionOf(request);
      if (!found) return reply.redirect(loginAfterRefusal(request, options.clock.now()), 303);
      const { principal, viewer } = await ctx.signIn(request, audienceOf(found.session.user.accountId));
      const next = safeReturnPath(request.body.next);
      const again = (error: FormError) => ctx.render(reply, passwordPage(viewer, { required: viewer.user.mustChangePassword, error, next }), 400);
      const refused = formErrorOf('password', request.body, request.validationError as FastifyError | undefined);
      if (refused) return again(refused);
      const { currentPassword = '', newPassword = '', confirm } = request.body;
      // Read before the change, which clears it.
      const forced = principal.user.mustChangePassword;
      if (newPassword !== confirm) return again({ form: 'password', field: 'confirm', text: 'The two new passwords differ: type the same password in both fields.', values: {} });
      try {
        await users.withActor(actorOf(principal, request)).changePassword(principal.user, currentPassword, newPassword, principal.sessionId);
      } catch (error) {
        if (!(error instanceof UserError)) throw error;
        const text = `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`;
        return again({ form: 'password', field: error.code === 'FORBIDDEN' ? 'currentPassword' : 'newPassword', text, values: {} });
      }
      // A first login's forced change is a detour on the way in (issue 34): the operator goes on
      // to the page asked for, or the console's home, with nothing more to click. So does a
      // change made on the way to a page (next).
      if (forced || next !== undefined) return reply.redirect(returnTarget(principal.user, next), 303);
      // A change chosen from the console is said, not only done (issue 26 item 12): the page
      // confirms it and leads on to the console.
      return reply.redirect('/console/password?changed=1', 303);
    },
  );
  return Promise.resolve();
};
