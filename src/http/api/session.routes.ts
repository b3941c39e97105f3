import type { FastifyPluginAsync } from 'fastify';
import type { LoginThrottle } from '../../users/login-throttle.js';
import type { UserService } from '../../users/user.service.js';
import { actorOf, ApiError, clearCookie, login } from '../auth/api-auth.js';
import { principalOf } from '../auth/api-principal.js';
import { inviteBody, loginBody, passwordBody } from './api-schemas.js';
import { describeUser } from './users.routes.js';
import { sessionAnswers } from './api-responses.js';

export interface SessionRoutesOptions {
  readonly users: UserService;
  readonly throttle: LoginThrottle;
  readonly audience: 'operator' | 'customer';
  readonly tag: string;
}

/** Routes every session API has, at its root: login, invite acceptance, me, password, logout, logout everywhere. */
export const sessionRoutes: FastifyPluginAsync<SessionRoutesOptions> = (app, options) => {
  const { users, throttle, audience, tag } = options;
  app.post<{ Body: { username: string; password: string } }>('/login', { config: { public: true }, schema: { tags: [tag], summary: 'Log in: sets the session cookie, answers the CSRF token', body: loginBody, errorStatuses: [401], response: { 200: sessionAnswers.login } } }, async (request, reply) => {
    const { user, csrfToken, expiresAt } = await login(request, reply, users, throttle, audience);
    return { user: describeUser(user), csrfToken, expiresAt };
  });
  app.post<{ Body: { token: string; password: string } }>('/invite/accept', { config: { public: true }, schema: { tags: [tag], summary: 'Set the password from an invite link', body: inviteBody, errorStatuses: [404], response: { 200: sessionAnswers.user } } }, async (request) => {
    const user = await users.withActor({ kind: audience, name: 'invitee', address: request.ip }).acceptInvite(request.body.token, request.body.password);
    return { user: describeUser(user) };
  });
  app.get('/me', { schema: { tags: [tag], summary: 'The logged-in user', response: { 200: sessionAnswers.me } } }, async (request) => {
    const principal = principalOf(request);
    const session = principal.sessionId === undefined ? undefined : await users.session(principal.sessionId);
    return { user: describeUser(principal.user), via: principal.via, canWrite: principal.canWrite, ...(session ? { csrfToken: session.csrfToken } : {}) };
  });
  app.post('/logout', { config: { ownSession: true }, schema: { tags: [tag], summary: 'End this session', access: 'A session of any role, or an admin operator token (with X-CSRF-Token for a session); a read-only token may not. Allowed before a one-time password is changed.', response: { 200: sessionAnswers.loggedOut } } }, async (request, reply) => {
    const principal = principalOf(request);
    if (principal.sessionId !== undefined) await users.endSession(principal.sessionId);
    clearCookie(request, reply);
    return { loggedOut: true };
  });
  app.post('/logout-everywhere', { config: { ownSession: true }, schema: { tags: [tag], summary: 'End every session of this user, on every instance, at once', access: 'A session of any role, or an admin operator token (with X-CSRF-Token for a session); a read-only token may not. Allowed before a one-time password is changed.', response: { 200: sessionAnswers.sessionsEnded } } }, async (request, reply) => {
    const principal = principalOf(request);
    const ended = await users.withActor(actorOf(principal, request)).endAllSessions(principal.user);
    clearCookie(request, reply);
    return { sessionsEnded: ended };
  });
  app.post<{ Body: { currentPassword: string; newPassword: string } }>('/me/password', { config: { ownSession: true }, schema: { tags: [tag], summary: 'Change the password (ends the other sessions)', access: 'Any logged-in user, whatever the role (with X-CSRF-Token); not an operator token. The one route, with the logouts, open before a one-time password is changed.', body: passwordBody, response: { 200: sessionAnswers.changed } } }, async (request) => {
    const principal = principalOf(request);
    if (principal.via !== 'session') throw new ApiError(403, 'forbidden', 'log in to change a password');
    await users.withActor(actorOf(principal, request)).changePassword(principal.user, request.body.currentPassword, request.body.newPassword, principal.sessionId);
    return { changed: true };
  });
  return Promise.resolve();
};
