import { figures, keysSection, ledgerSection, usageSection, type AccountPaths, type AccountView } from './account-sections.js';
import { html, type Html } from './html.js';
import { message, page, type Viewer } from './layout.js';
import type { FormError } from './form-errors.js';

export const CUSTOMER_PATHS: AccountPaths = { page: '/console/account', api: '/account/api' };

/** The customer's console: balance, usage, ledger and keys of the user's own account (and a notice, e.g. after sign-up). */
export function customerPage(viewer: Viewer, view: AccountView, notice?: Html, error?: FormError): string {
  return page(
    `Account ${view.account.username}`,
    html`${notice === undefined ? '' : message('notice', notice)}${figures(view.account, view.usage)}
${usageSection(view)}
${ledgerSection(view, CUSTOMER_PATHS)}
${keysSection(view, CUSTOMER_PATHS, viewer, error)}
${viewer.canWrite ? '' : html`<p class="muted">Your role (${viewer.user.role}) reads only; an owner of the account creates and revokes keys.</p>`}`,
    viewer,
  );
}
