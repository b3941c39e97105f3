import type { FastifyReply, FastifyRequest } from 'fastify';
import { readCookie, SESSION_COOKIE } from '../auth/api-auth.js';
import { SESSION_TTL_MS } from '../../users/user.service.js';
import { originForm } from '../request-target.js';
import { loginPath } from './return-path.js';

/**
 * Why a console request has no live session, so the login page can say it (issue 26 item 12)
 * instead of bouncing the user without a word:
 *
 * - `ended`: the session was ended on purpose: "Log out everywhere" (in this browser or another),
 *   or a password change elsewhere, or an operator disabling the user;
 * - `expired`: it reached its end (SESSION_TTL_MS) without being ended.
 *
 * The store deletes ended sessions, and the browser drops the session cookie when it expires, so
 * neither is left to ask. This browser's console therefore keeps a small cookie of its own,
 * {@link SESSION_STATE_COOKIE}, which is no secret and grants nothing: `until.<epoch seconds>`
 * (when the session of the last console login expires) or `ended` (this browser logged out
 * everywhere, so its other tabs, which share the now cleared session cookie, are told so). A
 * session cookie that names a session the store no longer has is the other devices' case.
 */
export type SessionEnd = 'ended' | 'expired';

export const SESSION_STATE_COOKIE = 'vl_session_state';

/** The state outlives the session by this long, so an expiry is still explained a week later. */
const STATE_MAX_AGE_S = Math.round(SESSION_TTL_MS / 1000) + 7 * 24 * 3600;

function stateCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${SESSION_STATE_COOKIE}=${value}; Path=/console; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

/** After a console login: when the new session expires. */
export function rememberSession(request: FastifyRequest, reply: FastifyReply, expiresAt: string): void {
  void reply.header('set-cookie', stateCookie(request, `until.${Math.floor(Date.parse(expiresAt) / 1000)}`, STATE_MAX_AGE_S));
}

/** After "Log out everywhere": this browser's other tabs are told why they were logged out. */
export function rememberEndedEverywhere(request: FastifyRequest, reply: FastifyReply): void {
  void reply.header('set-cookie', stateCookie(request, 'ended', Math.round(SESSION_TTL_MS / 1000)));
}

/** After a plain logout: nothing to explain (the user chose it, in this browser). */
export function forgetSession(request: FastifyRequest, reply: FastifyReply): void {
  void reply.header('set-cookie', stateCookie(request, '', 0));
}

/**
 * Why the request has no live session, given that it has none (the caller found out): undefined
 * when there is nothing to explain (never logged in here, or logged out in this browser).
 */
export function sessionEndOf(request: FastifyRequest, now: Date): SessionEnd | undefined {
  const state = readCookie(request, SESSION_STATE_COOKIE);
  const until = /^until\.(\d{1,12})$/.exec(state ?? '');
  if (until && Number(until[1]) * 1000 <= now.getTime()) return 'expired';
  if (state === 'ended') return 'ended';
  // The session cookie is still here, but the store no longer has the session it names.
  if (readCookie(request, SESSION_COOKIE)) return 'ended';
  return undefined;
}

/** What the login page says for each reason. */
export const SESSION_END_NOTICES: Readonly<Record<SessionEnd, string>> = {
  ended: 'You were logged out everywhere (by “Log out everywhere” or a password change), so this session has ended. Log in again to go on.',
  expired: 'Your session expired. Log in again to go on.',
};

/**
 * The login page for a request refused for want of a live session: with why (sessionEndOf) and
 * the page to come back to. A GET comes back to itself; a form posted from a page comes back to
 * that page (its Referer: the console's pages send it to their own origin, referrer-policy
 * same-origin), since the post's own address may have no page. loginPath keeps only console paths.
 */
export function loginAfterRefusal(request: FastifyRequest, now: Date): string {
  let next: string | undefined;
  if (request.method === 'GET' || request.method === 'HEAD') next = originForm(request.url);
  else {
    const referer = request.headers.referer;
    if (referer !== undefined) {
      try {
        const url = new URL(referer);
        next = `${url.pathname}${url.search}`;
      } catch {
        next = undefined;
      }
    }
  }
  return loginPath({ reason: sessionEndOf(request, now), next });
}
