import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { plainValidationError, typedValues } from './form-errors.js';
import { ApiError, sessionCookie } from '../auth/api-auth.js';
import { object, str } from '../api/api-schemas.js';
import { MAX_PASSWORD_LENGTH } from '../../users/password.js';
import { SESSION_TTL_MS, SignUpLimitError, UserError, type UserService } from '../../users/user.service.js';
import type { SignupConfig } from '../../config/config.js';
import { FormToken } from '../auth/form-token.js';
import type { ConsolePageOptions } from './console-context.js';
import { CSRF_FIELD } from './layout.js';
import { SIGNUP_PATH, signupPage } from './signup-pages.js';

export interface SignupPagesOptions extends ConsolePageOptions {
  readonly users: UserService;
  readonly signup: SignupConfig;
}

/** The sign-up form's anti-forgery token (form-token.ts): the page has no session yet. */
const SIGNUP_FORM = new FormToken('vl_signup', SIGNUP_PATH);

const signupForm = object(
  { username: str(200), password: str(MAX_PASSWORD_LENGTH), confirm: str(MAX_PASSWORD_LENGTH), [CSRF_FIELD]: str(100) },
  ['username', 'password', 'confirm'],
);

/**
 * `/console/signup` (issue 16, registered under SIGNUP_PATH): the console's face of UserService.signUp, the service behind
 * `POST /account/api/signup`. While sign-up is off (SIGNUP_ENABLED) the page answers 404 and
 * nothing links to it. After sign-up the customer is logged in and lands on their account page.
 */
export const signupPages: FastifyPluginAsync<SignupPagesOptions> = (app, deps) => {
  const { ctx } = deps;
  const absent = () => new ApiError(404, 'not-found', 'There is no such page.');

  app.get('', (request, reply) => {
    if (!deps.signup.enabled) throw absent();
    const token = SIGNUP_FORM.issue(request, reply);
    return ctx.render(reply, signupPage({ formToken: token, trialCredits: deps.signup.trialCredits }));
  });

  app.post<{ Body: { username: string; password: string; confirm: string; [CSRF_FIELD]?: string } }>('', { schema: { body: signupForm }, attachValidation: true }, async (request, reply) => {
    if (!deps.signup.enabled) throw absent();
    const token = SIGNUP_FORM.check(request, request.body[CSRF_FIELD]);
    const { username, password, confirm } = request.body;
    const again = (error: string, status: number) => ctx.render(reply, signupPage({ formToken: token, trialCredits: deps.signup.trialCredits, error, username }), status);
    // An over-long value is refused with its limit, the form shown again (issue 26 item 10).
    if (request.validationError) return again(plainValidationError(request.validationError as FastifyError, typedValues(request.body)).text, 400);
    if (password !== confirm) return again('The two passwords differ; type the same password twice.', 400);
    let created;
    try {
      created = await deps.users.signUp({ username, password, address: request.ip, trialCredits: deps.signup.trialCredits, perAddressPerDay: deps.signup.perAddressPerDay });
    } catch (error) {
      if (error instanceof SignUpLimitError) {
        void reply.header('retry-after', String(error.retryAfterSeconds));
        return again(`Too many sign-ups from your address: ${error.message}.`, 429);
      }
      if (error instanceof UserError) return again(`${error.message[0]?.toUpperCase() ?? ''}${error.message.slice(1)}.`, error.code === 'ALREADY_EXISTS' ? 409 : 400);
      throw error;
    }
    const session = await deps.users.startSession(created.user, request.ip);
    void reply.header('set-cookie', [sessionCookie(request, session.sessionId, SESSION_TTL_MS / 1000), SIGNUP_FORM.cleared(request)]);
    return reply.redirect('/console/account?welcome=1', 303);
  });
  return Promise.resolve();
};
