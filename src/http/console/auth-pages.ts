import { html, type HtmlValue } from './html.js';
import { message, page, type Viewer, csrfField } from './layout.js';
import { formTokenField } from '../auth/form-token.js';
import { signupLink } from './signup-pages.js';
import { fieldMessage, formMessage, hint, invalidAttrs, type FormError } from './form-errors.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../users/password.js';
import { NEXT_FIELD } from './return-path.js';

/** The hidden field that carries the page to return to (return-path.ts) through a form. */
const nextField = (next: string | undefined) => (next === undefined ? '' : html`<input type="hidden" name="${NEXT_FIELD}" value="${next}">`);

/** The login page; `signup` links the sign-up page (only while SIGNUP_ENABLED is on). */
export function loginPage(options: { formToken: string; error?: string | undefined; notice?: string | undefined; username?: string; signup?: boolean; next?: string | undefined }): string {
  return page(
    'Log in',
    html`${options.notice ? message('notice', options.notice) : ''}${options.error ? message('error', options.error) : ''}
<form method="post" action="/console/login" class="panel">${formTokenField(options.formToken)}${nextField(options.next)}
  <p class="muted">Customers and operators log in here.${options.next === undefined ? '' : html` Then you go on to <code>${options.next}</code>.`}</p>
  <label for="username">User name</label>
  <input type="text" id="username" name="username" autocomplete="username" required value="${options.username ?? ''}" autofocus>
  <label for="password">Password</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required>
  <p><button type="submit">Log in</button></p>
  ${options.signup === true ? html`<p class="muted">No account yet? ${signupLink('Sign up')}.</p>` : ''}
</form>`,
  );
}

/**
 * The password page: the current password, the new one typed twice (issue 26 item 11); a refused
 * value comes back at its field (form-errors.ts). Passwords are never sent back in the page.
 */
export function passwordPage(viewer: Viewer, options: { error?: FormError | undefined; required: boolean; changed?: boolean; next?: string | undefined }): string {
  const home = viewer.user.accountId === null ? '/console/admin' : '/console/account';
  const { error } = options;
  return page(
    'Change your password',
    html`${options.changed ? html`${message('notice', 'Your password is changed. Your other sessions have ended; this one goes on.')}<p><a href="${home}">Go on to the console</a></p>` : ''}${options.required ? message('notice', 'Set your own password before you go on: the one you logged in with worked only once.') : ''}
<form method="post" action="/console/password" class="panel">${csrfField(viewer)}${nextField(options.next)}${formMessage(error, 'password', ['currentPassword', 'newPassword', 'confirm'])}
  <label for="current">Current password</label>
  <input type="password" id="current" name="currentPassword" autocomplete="current-password" required${invalidAttrs(error, 'password', 'currentPassword', 'current')}>
  ${fieldMessage(error, 'password', 'currentPassword', 'current')}
  <label for="new">New password</label>
  <input type="password" id="new" name="newPassword" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}"${invalidAttrs(error, 'password', 'newPassword', 'new', true)}>
  ${hint('new', `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`)}${fieldMessage(error, 'password', 'newPassword', 'new')}
  <label for="new-again">New password again</label>
  <input type="password" id="new-again" name="confirm" autocomplete="new-password" required${invalidAttrs(error, 'password', 'confirm', 'new-again')}>
  ${fieldMessage(error, 'password', 'confirm', 'new-again')}
  <p><button type="submit">Change password</button></p>
</form>`,
    viewer,
  );
}

export function errorPage(status: number, text: HtmlValue, viewer?: Viewer): string {
  const title = status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : status === 429 ? 'Too many requests' : status >= 500 ? 'Something went wrong' : 'Cannot do that';
  return page(title, html`${message('error', text)}<p><a href="/console">Back to the console</a></p>`, viewer);
}

/** An unknown console address: the console's own page, with where to go from here. */
export function notFoundPage(path: string, viewer?: Viewer): string {
  const home = viewer === undefined ? html`<a href="/console/login">Log in to the console</a>` : html`<a href="${viewer.user.accountId === null ? '/console/admin' : '/console/account'}">Back to the console</a>`;
  return page('Page not found', html`${message('error', html`There is no console page at <code>${path}</code>.`)}<p>${home}</p>`, viewer);
}
