import type { FastifyPluginAsync } from 'fastify';
import type { SignupConfig } from '../../config/config.js';
import { describeAccount } from './accounts.routes.js';
import { ApiError, sessionCookie } from '../auth/api-auth.js';
import { sessionAnswers } from './api-responses.js';
import { object, str, USERNAME } from './api-schemas.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../users/password.js';
import { SESSION_TTL_MS, SignUpLimitError, type UserService } from '../../users/user.service.js';
import { describeUser } from './users.routes.js';

export interface SignupRoutesOptions {
  readonly users: UserService;
  readonly signup: SignupConfig;
}

/** The password's length is part of the schema, so a short one is a 400 naming `password`. */
export const signupBody = object(
  { username: USERNAME, password: str(MAX_PASSWORD_LENGTH, { minLength: MIN_PASSWORD_LENGTH }) },
  ['username', 'password'],
);

/**
 * `POST /account/api/signup` (issue 16): self-service sign-up, when the operator turned it on
 * (SIGNUP_ENABLED). It answers 201 and logs the new owner in, exactly as `/login` does (the
 * session cookie, and the CSRF token in the body), so a client goes straight on to
 * `POST /account/api/keys` for its first key. No key is made here: the one a client needs is
 * the one it names and creates, shown once by the route that made it, and a secret in a
 * sign-up answer would be one more place for it to be logged or lost.
 *
 * The route exists whatever the setting, so the OpenAPI document describes it; while sign-up is
 * off it answers the 404 of a route that does not exist.
 */
export const signupRoutes: FastifyPluginAsync<SignupRoutesOptions> = (app, deps) => {
  app.post<{ Body: { username: string; password: string } }>(
    '',
    {
      config: { public: true },
      schema: {
        tags: ['account: sign-up'],
        // 404 while sign-up is off; 409 when the name is taken.
        errorStatuses: [404, 409],
        summary:
          'Sign up (when the operator enabled it): answers 201 with the new account (its trial credits) and logs its owner in like /login; at most SIGNUP_PER_ADDRESS_PER_DAY per client address in 24 hours (429 with Retry-After), 409 when the name is taken',
        body: signupBody,
        response: { 201: sessionAnswers.signup },
      },
    },
    async (request, reply) => {
      if (!deps.signup.enabled) throw new ApiError(404, 'not-found', `no route POST ${request.url.split('?', 1)[0] ?? ''}`);
      let created;
      try {
        created = await deps.users.signUp({
          username: request.body.username,
          password: request.body.password,
          address: request.ip,
          trialCredits: deps.signup.trialCredits,
          perAddressPerDay: deps.signup.perAddressPerDay,
        });
      } catch (error) {
        if (error instanceof SignUpLimitError) throw new ApiError(429, 'rate-limited', error.message, undefined, error.retryAfterSeconds);
        throw error;
      }
      const session = await deps.users.startSession(created.user, request.ip);
      return reply
        .code(201)
        .header('set-cookie', sessionCookie(request, session.sessionId, SESSION_TTL_MS / 1000))
        .header('cache-control', 'no-store')
        .send({ user: describeUser(created.user), account: describeAccount(created.account), csrfToken: session.csrfToken, expiresAt: session.expiresAt });
    },
  );
  return Promise.resolve();
};
