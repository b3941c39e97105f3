import type { Account } from '../../accounts/account.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../users/password.js';
import { html, type Html } from './html.js';
import { CSRF_FIELD, message, page } from './layout.js';
import { atMost, hint, hintIdOf } from './form-errors.js';

/** Where the sign-up page lives (linked from the login and front pages only while sign-up is on). */
export const SIGNUP_PATH = '/console/signup';

export interface SignupPageInput {
  /** The form's anti-forgery token (the same value as the page's sign-up cookie). */
  readonly formToken: string;
  readonly trialCredits: number;
  readonly error?: string | undefined;
  readonly username?: string | undefined;
}

/** `/console/signup`: user name, password and its confirmation; nothing else is asked. */
export function signupPage(input: SignupPageInput): string {
  const credits = input.trialCredits === 1 ? '1 trial credit' : `${input.trialCredits} trial credits`;
  return page(
    'Sign up',
    html`${input.error === undefined ? '' : message('error', input.error)}
<form method="post" action="${SIGNUP_PATH}" class="panel">
  <input type="hidden" name="${CSRF_FIELD}" value="${input.formToken}">
  <p class="muted">A new account${input.trialCredits > 0 ? html` starts with <strong>${credits}</strong>` : ''}. Your user name is also the account's name in API calls.</p>
  <label for="signup-username">User name (letters, digits and . _ @ -)</label>
  <input type="text" id="signup-username" name="username" autocomplete="username" required pattern="[A-Za-z0-9._@\\-]+" value="${input.username ?? ''}" aria-describedby="${hintIdOf('signup-username')}" autofocus>
  ${hint('signup-username', atMost(64))}
  <label for="signup-password">Password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
  <input type="password" id="signup-password" name="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" aria-describedby="${hintIdOf('signup-password')}">
  ${hint('signup-password', `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`)}
  <label for="signup-confirm">Password again</label>
  <input type="password" id="signup-confirm" name="confirm" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
  <p><button type="submit">Sign up</button></p>
  <p class="muted">Already have an account? <a href="/console/login">Log in</a>.</p>
</form>`,
  );
}

/** The link to the sign-up page; the login and front pages show it only while sign-up is on. */
export function signupLink(text: string): Html {
  return html`<a href="${SIGNUP_PATH}">${text}</a>`;
}

/** Shown once on the customer's console after sign-up (`?welcome=1`). */
export function welcomeNotice(account: Account): Html {
  return html`Welcome, your account <strong>${account.username}</strong> is ready with ${account.credits} credit${account.credits === 1 ? '' : 's'}. Create an API key below to call the API (its secret is shown once).`;
}
