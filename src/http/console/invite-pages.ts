import { INVITE_TTL_MS, type Invitation } from '../../users/user.service.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../users/password.js';
import { formTokenField } from '../auth/form-token.js';
import { fieldMessage, formMessage, hint, invalidAttrs, typed, type FormError } from './form-errors.js';
import { html, type Html } from './html.js';
import { message, page, when } from './layout.js';

/** Where invitations are opened and accepted (both forms post here; the invite links' pages too). */
export const INVITE_PATH = '/console/invite';
/** The first step's form: the code, which the page's script takes from the link's fragment. */
export const INVITE_OPEN_PATH = `${INVITE_PATH}/open`;

const PASSWORD_HINT = `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`;

/**
 * The first step: the invitation code. Invite links carry it in the fragment, which no server and
 * no log sees; console.js puts it in this form and sends the form (a POST: the code stays out of
 * every URL), so the invitee lands on the second step at once. Without the script, it is pasted.
 */
export function inviteCodePage(input: { formToken: string; error?: FormError | undefined }): string {
  const { error } = input;
  return page(
    'Accept your invitation',
    html`<form method="post" action="${INVITE_OPEN_PATH}" class="panel" data-invite-open>${formTokenField(input.formToken)}${formMessage(error, 'open', ['token'])}
  <label for="invite-token">Invitation code (from your link)</label>
  <input type="text" id="invite-token" name="token" required autocomplete="off" value="${typed(error, 'open', 'token')}"${invalidAttrs(error, 'open', 'token', 'invite-token', true)}>
  ${hint('invite-token', 'the part of your link after #')}${fieldMessage(error, 'open', 'token', 'invite-token')}
  <p><button type="submit">Open the invitation</button></p>
</form>`,
  );
}

/** Who the invitation is for, in words: "carol as owner of the account acme". */
function invitedAs(invitation: Invitation) {
  const { user } = invitation;
  return user.account === null
    ? html`You are invited to this service's <strong>operator console</strong> as <strong data-testid="invited-user">${user.name}</strong> (${user.role}).`
    : html`You are invited to the account <strong data-testid="invited-account">${user.account}</strong> as the user <strong data-testid="invited-user">${user.name}</strong> (${user.role}).`;
}

/**
 * The second step: whose invitation this is (account and user name), and the new password typed
 * twice. The code rides along in a hidden field; after it the invitee is logged in.
 */
export function inviteAcceptPage(input: { formToken: string; token: string; invitation: Invitation; error?: FormError | undefined }): string {
  const { error, invitation } = input;
  return page(
    'Accept your invitation',
    html`<p data-testid="invitation">${invitedAs(invitation)} It works until ${when(invitation.expiresAt)}.</p>
<form method="post" action="${INVITE_PATH}" class="panel">${formTokenField(input.formToken)}${formMessage(error, 'accept', ['password', 'confirm'])}
  <input type="hidden" name="token" value="${input.token}">
  <label for="invite-user">Your user name (you log in with it)</label>
  <input type="text" id="invite-user" value="${invitation.user.name}" autocomplete="username" readonly>
  <label for="new-password">Choose a password</label>
  <input type="password" id="new-password" name="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}"${invalidAttrs(error, 'accept', 'password', 'new-password', true)} autofocus>
  ${hint('new-password', PASSWORD_HINT)}${fieldMessage(error, 'accept', 'password', 'new-password')}
  <label for="confirm-password">Password again</label>
  <input type="password" id="confirm-password" name="confirm" autocomplete="new-password" required${invalidAttrs(error, 'accept', 'confirm', 'confirm-password')}>
  ${fieldMessage(error, 'accept', 'confirm', 'confirm-password')}
  <p><button type="submit">Set password and log in</button></p>
</form>`,
  );
}

/** An invitation that cannot be accepted (any more), said plainly, with where to go from here. */
export function inviteGonePage(invitation: Invitation | undefined): string {
  if (invitation === undefined) {
    return page(
      'Invitation not found',
      html`${message('error', 'This invitation code is not known. Check that you opened the whole link from your invitation (or copied the whole code).')}
<p>If it still does not work, ask whoever invited you for a new link.</p>`,
    );
  }
  const name = html`<strong>${invitation.user.name}</strong>`;
  if (invitation.state === 'used') {
    return page(
      'Invitation already used',
      html`${message('error', html`This invitation was used ${when(invitation.usedAt)}: the password of ${name} is set, and an invitation works only once.`)}
<p><a href="/console/login">Log in</a> with that password, or ask whoever invited you to reset it if it was not you.</p>`,
    );
  }
  return page(
    'Invitation expired',
    html`${message('error', html`This invitation for ${name} expired ${when(invitation.expiresAt)}: invitations work for ${INVITE_TTL_MS / 86_400_000} days.`)}
<p>Ask whoever invited you for a new one.</p>`,
  );
}

/** Shown once on the account page an invitee lands on (`?joined=1`). */
export function joinedNotice(user: { readonly name: string; readonly account: string | null }): Html {
  return html`Welcome, ${user.name}: your password is set and you are logged in to the account <strong>${user.account ?? ''}</strong>.`;
}
