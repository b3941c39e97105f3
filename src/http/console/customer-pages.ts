import { figures, keysSection, ledgerSection, usageSection, type AccountPaths, type AccountView } from './account-sections.js';
import { html, type Html } from './html.js';
import { message, page, type Viewer } from './layout.js';
import type { FormError } from './form-errors.js';

export const CUSTOMER_PATHS: AccountPaths = { page: '/console/account', api: '/account/api' };

/** The customer's console: balance, usage, ledger and keys of the user's own account (and a notice, e.g. after sign-up). */
export function customerPage(viewer: Viewer, view: AccountView, notice?: Html, error?: FormError, credit?: Html): string {
  return page(
    `Account ${view.account.username}`,
    html`${notice === undefined ? '' : message('notice', notice)}${credit}${figures(view.account, view.usage)}
${usageSection(view)}
${ledgerSection(view, CUSTOMER_PATHS)}
${keysSection(view, CUSTOMER_PATHS, viewer, error)}
${viewer.canWrite ? '' : html`<p class="muted">Your role (${viewer.user.role}) reads only; an owner of the account creates and revokes keys.</p>`}`,
    viewer,
  );
}

/**
 * What a customer sees when the balance is 0 or below the account's lowest alert threshold, with
 * the way to more credits: CONSOLE_TOPUP_URL (a link, or the operator's sentence), else "ask your
 * operator". Nothing while the balance is above every threshold.
 */
export function lowCreditNotice(credits: number, thresholds: readonly number[], topUp: string | undefined): Html | undefined {
  const positive = thresholds.filter((n) => n > 0);
  const lowest = positive.length === 0 ? undefined : Math.min(...positive);
  if (credits > 0 && (lowest === undefined || credits >= lowest)) return undefined;
  const way = topUp === undefined ? html`Ask your operator for more credits.` : /^https?:\/\//i.test(topUp) ? html`<a href="${topUp}">Buy credits</a>.` : html`${topUp}`;
  const state =
    credits <= 0
      ? html`<strong>Your account has no credits left</strong>: lookups that cost credits are refused until credits are added (test plates and not-found answers stay free).`
      : html`<strong>Your balance is low</strong>: ${credits.toLocaleString('en')} credit${credits === 1 ? '' : 's'}, below your alert threshold of ${(lowest ?? 0).toLocaleString('en')}.`;
  return html`<div class="${credits <= 0 ? 'error' : 'notice'}" role="${credits <= 0 ? 'alert' : 'status'}" data-testid="low-credit">${state} ${way}</div>`;
}
