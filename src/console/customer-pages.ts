import { figures, keysSection, ledgerSection, usageSection, type AccountPaths, type AccountView } from './account-sections.js';
import { html } from './html.js';
import { page, type Viewer } from './layout.js';

export const CUSTOMER_PATHS: AccountPaths = { page: '/console/account', api: '/account/api' };

/** The customer's console: balance, usage, ledger and keys of the user's own account. */
export function customerPage(viewer: Viewer, view: AccountView): string {
  return page(
    `Account ${view.account.username}`,
    html`${figures(view.account, view.usage)}
${usageSection(view)}
${ledgerSection(view, CUSTOMER_PATHS)}
${keysSection(view, CUSTOMER_PATHS, viewer)}
${viewer.canWrite ? '' : html`<p class="muted">Your role (${viewer.user.role}) reads only; an owner of the account creates and revokes keys.</p>`}`,
    viewer,
  );
}
