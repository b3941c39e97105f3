import type { FastifyInstance } from 'fastify';
import { actorOf, clearCookie, readCookie, SESSION_COOKIE } from '../auth/api-auth.js';
import type { UserService } from '../../users/user.service.js';
import type { ConsoleContext } from './console-context.js';

export const LOGOUT_EVERYWHERE_PATH = '/console/logout-everywhere';

/**
 * "Log out everywhere" for every console user, operators and customers alike: the same call as the
 * APIs' `/logout-everywhere`. Sessions live in the store, so one delete ends them on every
 * instance at once (src/users/user.service.ts).
 */
export function registerSessionPages(app: FastifyInstance, ctx: ConsoleContext, users: UserService): void {
  app.post(LOGOUT_EVERYWHERE_PATH, { schema: { body: ctx.form({}) } }, async (request, reply) => {
    const sessionId = readCookie(request, SESSION_COOKIE);
    const session = sessionId === undefined ? undefined : await users.session(sessionId);
    if (session) {
      // A viewer or member may end its own sessions: it changes nothing but the user's own logins.
      const { principal } = await ctx.signIn(request, session.user.accountId === null ? 'operator' : 'customer');
      await users.withActor(actorOf(principal, request)).endAllSessions(principal.user);
    }
    clearCookie(request, reply);
    return reply.redirect('/console/login?ended=1', 303);
  });
}
