import { timingSafeEqual } from 'node:crypto';
import { STORE_AWAY, isStoreUnavailable } from '../../storage/store-unavailable.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../audit/audit-log.js';
import { TEXT_RULES } from '../api/api-schemas.js';
import { DomainError, type DomainErrorCode } from '../../shared/domain-error.js';
import type { LoginThrottle, RequestLimiter } from '../../users/login-throttle.js';
import type { User, UserService } from '../../users/user.service.js';
import { codeOfClientStatus, type ApiErrorCode } from '../api/api-error-codes.js';

/** The session cookie (both APIs; a user's role decides which API it may use). */
export const SESSION_COOKIE = 'vl_session';
/** The header a cookie-authenticated write must carry (the session's CSRF token). */
export const CSRF_HEADER = 'x-csrf-token';

/** Who is calling, once authenticated. */
export interface Principal {
  readonly user: User;
  readonly via: 'session' | 'token';
  /** What the caller may do: viewers, members and read tokens only read. */
  readonly canWrite: boolean;
  readonly sessionId?: string | undefined;
  readonly tokenName?: string | undefined;
}

/** An error the API answers in JSON with its own status (`{error, message, field?}`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: ApiErrorCode,
    message: string,
    readonly field?: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** HttpOnly, SameSite=Lax, Secure when the request came over HTTPS (directly or through a trusted proxy). */
export function sessionCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

export function actorOf(principal: Principal, request: FastifyRequest): Actor {
  const kind = principal.via === 'token' ? 'token' : principal.user.accountId === null ? 'operator' : 'customer';
  const name = principal.via === 'token' ? `${principal.user.name}/${principal.tokenName ?? ''}` : principal.user.name;
  return { kind, name, address: request.ip };
}

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Authenticates a request of either API: an operator token (`Authorization: Bearer`, admin API
 * only) or the session cookie. Cookie-authenticated writes need the session's CSRF token in the
 * X-CSRF-Token header: a cross-site form can send the cookie (SameSite=Lax lets top-level POSTs
 * through in some browsers' first two minutes) but cannot read or set that header.
 */
export async function authenticate(
  request: FastifyRequest,
  users: UserService,
  audience: 'operator' | 'customer',
): Promise<Principal> {
  const authorization = request.headers.authorization;
  if (authorization !== undefined && /^Bearer /i.test(authorization)) {
    if (audience !== 'operator') throw new ApiError(401, 'unauthorized', 'operator tokens are for the admin API only');
    const found = await users.authenticateToken(authorization.slice(7).trim());
    if (!found) throw new ApiError(401, 'unauthorized', 'the token is unknown or revoked');
    authenticated.add(request);
    return { user: found.user, via: 'token', canWrite: found.token.scope === 'write' && found.user.role === 'admin', tokenName: found.token.name };
  }
  const sessionId = readCookie(request, SESSION_COOKIE);
  const session = sessionId === undefined ? undefined : await users.session(sessionId);
  if (!session || sessionId === undefined) throw new ApiError(401, 'unauthorized', 'log in first (or send an operator token)');
  const { user } = session;
  if ((audience === 'operator') !== (user.accountId === null)) throw new ApiError(403, 'forbidden', `this API is for ${audience === 'operator' ? 'operators' : 'customers'}`);
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    const presented = request.headers[CSRF_HEADER];
    if (typeof presented !== 'string' || !sameSecret(presented, session.csrfToken)) {
      throw new ApiError(403, 'csrf', `a write with a session cookie needs the session's CSRF token in the ${CSRF_HEADER} header`);
    }
  }
  const canWrite = !user.mustChangePassword && (user.role === 'admin' || user.role === 'owner');
  authenticated.add(request);
  return { user, via: 'session', canWrite, sessionId };
}

export function requireWrite(principal: Principal): void {
  if (principal.user.mustChangePassword) throw new ApiError(403, 'password-change-required', 'change the one-time password first (POST .../me/password)');
  if (!principal.canWrite) throw new ApiError(403, 'forbidden', `role ${principal.user.role}${principal.via === 'token' ? ' (or the token scope)' : ''} may only read`);
}

/** The methods that change nothing: any signed-in principal may call them (once its password is its own). */
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** What a route of either API says about its access (FastifyContextConfig, api-schemas.ts). */
export interface RouteAccess {
  readonly public?: boolean | undefined;
  readonly ownSession?: boolean | undefined;
}

/**
 * The one access rule of both APIs, checked before any authenticated route's handler, by the
 * request's method and the route's flag rather than route by route (issue 23, findings 1 and 6):
 * - a user still holding a one-time password reaches only the `ownSession` routes (change the
 *   password, log out), as the README's "change it at first login" says;
 * - every method but GET and HEAD changes something, so it needs a principal that may write
 *   (requireWrite: admins and owners, write tokens of admins). On an `ownSession` route a session
 *   acts on itself (a viewer may log itself out everywhere), but a token still needs the write
 *   scope: a read token changes nothing, not even its owner's sessions.
 */
export function checkAccess(principal: Principal, method: string, route: RouteAccess): void {
  if (principal.user.mustChangePassword && route.ownSession !== true) {
    throw new ApiError(403, 'password-change-required', 'change the one-time password first (POST .../me/password)');
  }
  if (READ_METHODS.has(method)) return;
  if (route.ownSession === true && principal.via === 'session') return;
  requireWrite(principal);
}

/**
 * The answers of the services' error codes (every DomainError: accounts, users, webhooks, credit
 * alerts, test plates, the store's constraint violations), the one mapping for every route of
 * both APIs and the console. An INVALID from a service is an invalid request as much as a schema
 * failure is, so both answer `invalid-request`.
 */
const DOMAIN_ERRORS: Readonly<Record<DomainErrorCode, { status: number; code: ApiErrorCode }>> = {
  NOT_FOUND: { status: 404, code: 'not-found' },
  ALREADY_EXISTS: { status: 409, code: 'already-exists' },
  IN_USE: { status: 409, code: 'in-use' },
  INVALID: { status: 400, code: 'invalid-request' },
  INSUFFICIENT_CREDITS: { status: 409, code: 'insufficient-credits' },
  FORBIDDEN: { status: 403, code: 'forbidden' },
};

/** The status and code of a service's own error (the console shows the status with the message); undefined for any other error. */
export function domainError(error: unknown): { status: number; code: ApiErrorCode } | undefined {
  // `instanceof` on the generic class narrows to DomainError<any>; every subclass's code is a DomainErrorCode.
  return error instanceof DomainError ? DOMAIN_ERRORS[(error as DomainError).code] : undefined;
}

/**
 * Maps errors to the API's JSON answers, `{"error": code, "message", "field"?}`; never a stack
 * trace. Plugins registered inside the API (imports, alerts and webhooks) set no handler of their
 * own: their errors reach this one, so a client parses one shape.
 */
export function installErrorHandling(app: FastifyInstance, prefix: string): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      // An unknown field fails `propertyNames`: ajv names it on the inner error or in the params.
      const unknown = error.validation.find((v) => v.keyword === 'propertyNames' || typeof (v as { propertyName?: unknown }).propertyName === 'string');
      const first = unknown ?? error.validation[0];
      const named = (first as { propertyName?: unknown } | undefined)?.propertyName;
      const params: Record<string, unknown> = { ...(typeof named === 'string' ? { propertyName: named } : {}), ...first?.params };
      const path = (first?.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
      const extra = typeof params.propertyName === 'string' ? params.propertyName : typeof params.missingProperty === 'string' ? params.missingProperty : '';
      const field = [path, extra].filter((p) => p !== '').join('.') || (error.validationContext ?? 'body');
      const rule = first?.keyword === 'pattern' && typeof params.pattern === 'string' ? TEXT_RULES[params.pattern] : undefined;
      const message = unknown ? `unknown field ${field}` : `${field} ${rule ?? first?.message ?? 'is invalid'}`;
      return reply.code(400).send({ error: 'invalid-request', message: `${error.validationContext ?? 'body'}: ${message}`, field });
    }
    if (error instanceof ApiError) {
      if (error.retryAfter !== undefined) void reply.header('retry-after', String(error.retryAfter));
      return reply.code(error.status).send({ error: error.error, message: error.message, ...(error.field ? { field: error.field } : {}) });
    }
    const domain = domainError(error);
    if (domain) return reply.code(domain.status).send({ error: domain.code, message: error.message });
    if (isStoreUnavailable(error)) {
      request.log.warn({ err: error }, 'admin API request failed: the database is away');
      return reply.code(STORE_AWAY.status).header('retry-after', String(STORE_AWAY.retryAfterSeconds)).send({ error: 'unavailable', message: STORE_AWAY.message });
    }
    const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) {
      request.log.error({ err: error }, 'admin API request failed');
      return reply.code(500).send({ error: 'internal', message: `internal error; quote request id ${request.id}` });
    }
    // Fastify's own refusals (a body over the limit, an unread media type, malformed JSON) and an
    // invalid Host: the code of their status, as a route that refuses the same thing answers it.
    return reply.code(status).send({ error: codeOfClientStatus(status), message: error.message });
  });
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ error: 'not-found', message: `no route ${request.method} ${request.url.split('?', 1)[0] ?? prefix}` }));
}

/**
 * `Cache-Control: no-store` on every answer of the scope that did not choose its own caching (the
 * documentation page's hashed assets do). Answers of the admin and account APIs carry secrets
 * (new keys, tokens, webhook signing secrets, invite links, the session's CSRF token in /me) and
 * private data; one rule for all of them rather than a header per route that one route forgets
 * (issue 23 finding 7: webhook secrets were sent without it).
 */
export function noStoreAnswers(app: FastifyInstance): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
    done(null, payload);
  });
}

/** Requests whose session or token `authenticate` accepted (limitRequests gives their address's count back). */
const authenticated = new WeakSet<FastifyRequest>();

/**
 * Counts every request of the scope against its caller's per-minute limit on `surface` (each API
 * and the console has its own budget): a request with a session cookie or an Authorization header
 * against that credential, and every request against its address until its credential proves
 * live (issue 23 finding 4: made-up cookies or tokens, each a fresh key, dodged the limit). As the
 * login throttle does, the address's count is taken first and given back once `authenticate`
 * accepted the credential, so signed-in callers sharing an address (an office) do not use up
 * each other's budget, while unauthenticated ones all count against it.
 */
export function limitRequests(app: FastifyInstance, limiter: RequestLimiter, surface: 'admin' | 'account' | 'console'): void {
  const addressCaller = (request: FastifyRequest): string => `address:${request.ip}`;
  app.addHook('onRequest', async (request) => {
    const credential = readCookie(request, SESSION_COOKIE) ?? request.headers.authorization;
    const byAddress = await limiter.take(surface, addressCaller(request));
    const byCredential = credential === undefined ? 0 : await limiter.take(surface, credential.slice(0, 512));
    const wait = Math.max(byAddress, byCredential);
    if (wait > 0) throw new ApiError(429, 'rate-limited', `too many requests; retry in ${wait} s`, undefined, wait);
  });
  app.addHook('onResponse', async (request) => {
    if (authenticated.has(request)) await limiter.giveBack(surface, addressCaller(request));
  });
}

/** Login with throttling per user name and per address; sets the session cookie. */
export async function login(
  request: FastifyRequest<{ Body: { username: string; password: string } }>,
  reply: FastifyReply,
  users: UserService,
  throttle: LoginThrottle,
  audience: 'operator' | 'customer',
): Promise<{ user: User; csrfToken: string; expiresAt: string }> {
  const { username, password } = request.body;
  // Counted before the password is checked (LoginThrottle), given back when it is right.
  const wait = await throttle.attempt(username, request.ip);
  if (wait > 0) throw new ApiError(429, 'rate-limited', `too many failed logins; retry in ${wait} s`, undefined, wait);
  const user = await users.verifyLogin(username, password);
  if (!user || (audience === 'operator') !== (user.accountId === null)) throw new ApiError(401, 'unauthorized', 'wrong user name or password');
  await throttle.succeeded(username, request.ip);
  // A login that succeeded is no anonymous request: limitRequests gives the address its count back.
  authenticated.add(request);
  const session = await users.startSession(user, request.ip);
  void reply.header('set-cookie', sessionCookie(request, session.sessionId, 12 * 3600)).header('cache-control', 'no-store');
  return { user, csrfToken: session.csrfToken, expiresAt: session.expiresAt };
}

export function clearCookie(request: FastifyRequest, reply: FastifyReply): void {
  void reply.header('set-cookie', sessionCookie(request, '', 0));
}
