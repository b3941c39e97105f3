import type { Account } from '../../accounts/account.js';
import { fieldMessage, formMessage, invalidAttrs, typed, type FormError } from './form-errors.js';
import { accountStatus } from '../../accounts/account.js';
import type { ApiKeyInfo, ApiKeyWithSpend } from '../../accounts/api-key.repository.js';
import type { FreeLedgerReason, KeyUsageRow, LedgerRow, LedgerRowType, UsageRow } from '../../accounts/ledger-queries.js';
import { capMark, KEY_CAP_ALERT_PERCENTS } from '../../alerts/key-cap-alerts.js';
import { DEMO_EXAMPLE_PATH } from '../../bootstrap/seed.js';
import { html, type Html } from './html.js';
import { csrfField, when, type Viewer } from './layout.js';
import { usageChart } from './usage-chart.js';

/** What an account page shows, read through the same services and queries as the API. */
export interface AccountView {
  readonly account: Account;
  readonly keys: readonly ApiKeyWithSpend[];
  readonly ledger: readonly LedgerRow[];
  /** The id to page on (`?before=`) when there are older rows. */
  readonly nextBefore: number | null;
  readonly usage: readonly UsageRow[];
  /** Lookups per day and API key (issue 33: the per-key chart). */
  readonly keyUsage: readonly KeyUsageRow[];
  readonly days: readonly string[];
  /** The filters the ledger was read with, echoed into the form and the links. */
  readonly filter: { readonly operation?: string | undefined; readonly type?: LedgerRowType | undefined; readonly charged?: boolean | undefined; readonly key?: string | undefined };
  /** The operations the ledger can be filtered on (the catalogue's). */
  readonly operations: readonly string[];
}

/** The links this page's forms post to, and where the API serves its CSV. */
export interface AccountPaths {
  /** The console page of the account (`/console/account` or `/console/admin/accounts/NAME`). */
  readonly page: string;
  /** The API route prefix of the account (`/account/api` or `/admin/api/accounts/NAME`). */
  readonly api: string;
}

export function statusBadge(account: Account): Html {
  const status = accountStatus(account);
  return html`<span class="status-${status}">${status}</span>`;
}

export function figures(account: Account, usage: readonly UsageRow[]): Html {
  const free = usage.reduce((sum, r) => sum + r.freeLookups, 0);
  const charged = usage.reduce((sum, r) => sum + r.lookups, 0) - free;
  return html`<div class="figures">
  <div class="figure"><div class="muted">Balance</div><div class="value" data-testid="balance">${account.credits}</div><div>credits</div></div>
  <div class="figure"><div class="muted">Status</div><div class="value">${statusBadge(account)}</div></div>
  <div class="figure"><div class="muted">Charged lookups, 30 days</div><div class="value" data-testid="lookups-30d">${charged}</div><div data-testid="free-30d">and ${free} free</div></div>
</div>`;
}

/** A lookup's key as a person reads it: the stored `7KDJ294|CA` is "7KDJ294 (CA)". */
export function lookupKey(query: string | null): string {
  const [first = '', ...rest] = (query ?? '').split('|');
  return rest.length === 0 ? first : `${first} (${rest.join(', ')})`;
}

/** "A CheckFrance lookup of AB123CD over json", the start of a free row's explanation. */
function lookup(row: LedgerRow): Html {
  return html`A <strong>${row.operation ?? ''}</strong> lookup of <code>${lookupKey(row.query)}</code> over ${row.interface ?? 'an unknown interface'}`;
}

/**
 * Why a lookup cost nothing, in words ("is free: a test plate"): the ledger row's explanation,
 * and Try it's for the lookup it just ran.
 */
export function whyFree(reason: FreeLedgerReason): string {
  switch (reason) {
    case 'free test plate':
      return 'is free: a test plate';
    case 'free: no result':
      return 'is free: the answer held no data to charge for (an empty search or list)';
    case 'free: repeated request':
      return 'is free: it repeated an earlier, paid lookup with the same Idempotency-Key and got its stored answer';
    case 'free':
      return 'cost nothing';
  }
}

/** Why a ledger row moved what it did, in words (the row's `reason`, with its details). */
export function whyItCost(row: LedgerRow): Html {
  const credits = (n: number) => `${n} credit${n === 1 ? '' : 's'}`;
  switch (row.reason) {
    case 'charged':
      return html`A successful <strong>${row.operation ?? ''}</strong> lookup of <code>${lookupKey(row.query)}</code> over ${row.interface ?? 'an unknown interface'} costs ${credits(-row.delta)}.`;
    case 'free test plate':
    case 'free: no result':
    case 'free: repeated request':
    case 'free':
      return html`${lookup(row)} ${whyFree(row.reason)}.`;
    case 'initial credits':
      return html`Credits given when the account was created.`;
    case 'trial credits':
      return html`Trial credits given at sign-up.`;
    case 'top-up':
      return html`${credits(row.delta)} granted by an operator${row.reference ? html`, reference <code>${row.reference}</code>` : ''}${row.note ? html`: ${row.note}` : ''}.`;
    case 'reversed: answer not delivered':
      return html`${credits(row.delta)} given back: the answer to ${lookup(row)} could not be delivered (the connection closed first).`;
    case 'removal':
      return html`${credits(-row.delta)} removed by an operator${row.reference ? html`, reference <code>${row.reference}</code>` : ''}${row.note ? html`: ${row.note}` : ''}.`;
  }
}

function query(params: Record<string, string | number | boolean | undefined>): string {
  const entries = Object.entries(params).filter((e): e is [string, string | number | boolean] => e[1] !== undefined && e[1] !== '');
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
}

export function ledgerSection(view: AccountView, paths: AccountPaths): Html {
  const { filter } = view;
  const filters = { operation: filter.operation, type: filter.type, charged: filter.charged, key: filter.key };
  const keyNames = [...new Set([...view.keys.map((k) => k.name), ...(filter.key === undefined ? [] : [filter.key])])].sort();
  const csv = `${paths.api}/ledger.csv${query(filters)}`;
  // A link's operation the catalogue no longer has (a retired one) stays choosable.
  const operations = filter.operation === undefined || view.operations.includes(filter.operation) ? [...view.operations].sort() : [filter.operation, ...[...view.operations].sort()];
  const option = (value: LedgerRowType | '', label: string) => html`<option value="${value}"${(filter.type ?? '') === value ? ' selected' : ''}>${label}</option>`;
  return html`<section aria-labelledby="ledger">
  <h2 id="ledger">Ledger</h2>
  <p class="muted">One row per lookup that found its answer (charged, or free with the reason) and per credit change. Lookups that find nothing or fail cost nothing and write no row.</p>
  <form method="get" action="${paths.page}" class="row" aria-label="Filter the ledger">
    <div><label for="f-operation">Operation</label><select id="f-operation" name="operation"><option value="">all</option>${operations.map((name) => html`<option${name === filter.operation ? ' selected' : ''}>${name}</option>`)}</select></div>
    <div><label for="f-key">Key</label><select id="f-key" name="key"><option value="">all</option>${keyNames.map((name) => html`<option${name === filter.key ? ' selected' : ''}>${name}</option>`)}</select></div>
    <div><label for="f-type">Rows</label><select id="f-type" name="type">
      ${filter.charged === false ? html`<option value="" selected>all but charged lookups</option>` : option('', 'all')}${option('charged', 'charged lookups')}${option('free', 'free lookups')}${option('lookups', 'all lookups')}${option('credits', 'credit changes')}
    </select></div>
    <div><button type="submit" class="secondary">Filter</button></div>
    <div><a href="${csv}" download>Export CSV</a></div>
  </form>
  <div class="table-wrap" role="region" aria-label="Ledger table" tabindex="0"><table data-testid="ledger">
    <thead><tr><th scope="col">When</th><th scope="col" class="num">Change</th><th scope="col" class="num">Balance after</th><th scope="col">Why this cost what it cost</th><th scope="col">Key</th></tr></thead>
    <tbody>${view.ledger.length === 0 ? html`<tr><td colspan="5" class="muted">No rows.</td></tr>` : view.ledger.map((row) => html`<tr><td>${when(row.at)}</td><td class="num">${row.delta > 0 ? `+${row.delta}` : row.delta}</td><td class="num">${row.balanceAfter}</td><td>${whyItCost(row)}</td><td data-testid="ledger-key">${madeBy(row)}</td></tr>`)}</tbody>
  </table></div>
  <div class="pager">${view.nextBefore === null ? '' : html`<a href="${paths.page}${query({ ...filters, before: view.nextBefore })}">Older rows</a>`}</div>
</section>`;
}

/** Who made a ledger row's lookup: its API key, the console user, or nobody named (username alone, grants, older rows). */
function madeBy(row: LedgerRow): Html {
  if (row.key !== null) return html`<code>${row.key}</code>`;
  if (row.user !== null) return html`console: ${row.user}`;
  return html`<span class="muted">-</span>`;
}

export function usageSection(view: AccountView): Html {
  // The per-key chart (issue 33) reuses the chart by operation: its series are the keys.
  const byKey: UsageRow[] = view.keyUsage.map((r) => ({ day: r.day, operation: r.key ?? '(no key)', lookups: r.lookups, freeLookups: r.freeLookups, credits: r.credits }));
  return html`<section aria-labelledby="usage"><h2 id="usage">Usage</h2>${usageChart(view.usage, view.days, 'lookups', 'Lookups per day, charged by operation and free, last 30 days (UTC)')}
  <div data-testid="usage-by-key">${usageChart(byKey, view.days, 'credits', 'Credits per day by API key, last 30 days (UTC)')}</div></section>`;
}

/** A key's own rules in words (issue 33); empty when it has none. */
export function keyRules(key: ApiKeyInfo): string {
  return [
    key.cap ? `cap ${key.cap.credits} credits ${key.cap.period === 'total' ? 'in total' : `per ${key.cap.period}`}` : undefined,
    key.operations ? `only ${key.operations.join(', ')}` : undefined,
    key.perSecond !== null ? `${key.perSecond}/s` : undefined,
    key.perDay !== null ? `${key.perDay}/day` : undefined,
    key.allowedIps ? `from ${key.allowedIps.join(', ')}` : undefined,
    Object.keys(key.labels).length > 0 ? Object.entries(key.labels).map(([k, v]) => `${k}=${v}`).join(', ') : undefined,
  ]
    .filter((r) => r !== undefined)
    .join('; ');
}

/** What a key spent this period, against its cap: the console's view of the key cap alerts (80%, 100%). */
function keySpend(key: ApiKeyWithSpend): Html {
  const spent = `${key.spend.credits} (${key.spend.periodKey})`;
  if (!key.cap) return html`${spent}`;
  const reached = [...KEY_CAP_ALERT_PERCENTS].reverse().find((p) => key.spend.credits >= capMark(key.cap?.credits ?? 0, p));
  const badge = reached === undefined ? '' : html` <strong class="${reached >= 100 ? 'danger' : 'warn'}" data-testid="key-cap-alert">${reached >= 100 ? 'cap reached' : `${reached}% of cap`}</strong>`;
  return html`${key.spend.credits} of ${key.cap.credits} (${key.spend.periodKey})${badge}`;
}

/** The form that changes a key's rules: an empty field removes its rule. */
function keySettingsForm(key: ApiKeyInfo, paths: AccountPaths, viewer: Viewer): Html {
  const id = `ks-${key.id}`;
  const field = (name: string, label: string, value: string, hint: string) =>
    html`<div><label for="${id}-${name}">${label}</label><input type="text" id="${id}-${name}" name="${name}" value="${value}"><span class="hint">${hint}</span></div>`;
  return html`<details><summary>Rules</summary><form method="post" action="${paths.page}/keys/${key.id}/settings" class="row" aria-label="Rules of key ${key.name}">${csrfField(viewer)}
    ${field('cap', 'Credit cap', key.cap === null ? '' : String(key.cap.credits), 'credits per period; empty: none')}
    <div><label for="${id}-capPeriod">Per</label><select id="${id}-capPeriod" name="capPeriod">${(['month', 'day', 'total'] as const).map((p) => html`<option value="${p}"${(key.cap?.period ?? 'month') === p ? ' selected' : ''}>${p}</option>`)}</select></div>
    ${field('operations', 'Operations', key.operations?.join(', ') ?? '', 'names, country:NAME, vin; empty: all')}
    ${field('perSecond', 'Per second', key.perSecond === null ? '' : String(key.perSecond), 'empty: the account limit')}
    ${field('perDay', 'Per day', key.perDay === null ? '' : String(key.perDay), 'empty: the account limit')}
    ${field('allowedIps', 'Addresses', key.allowedIps?.join(', ') ?? '', 'CIDR blocks; empty: any')}
    ${field('labels', 'Labels', Object.entries(key.labels).map(([k, v]) => `${k}=${v}`).join(', '), 'key=value, comma separated')}
    <div><button type="submit" class="secondary" aria-label="Save rules of key ${key.name}">Save rules</button></div></form></details>`;
}

function keyState(key: ApiKeyInfo): string {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null) return `rolled: works until ${key.expiresAt.slice(0, 16).replace('T', ' ')} UTC`;
  return 'live';
}

export function keysSection(view: AccountView, paths: AccountPaths, viewer: Viewer, error?: FormError): Html {
  const live = (k: ApiKeyInfo) => k.revokedAt === null;
  return html`<section aria-labelledby="keys">
  <h2 id="keys">API keys</h2>
  <div class="table-wrap" role="region" aria-label="API keys table" tabindex="0"><table data-testid="keys">
    <thead><tr><th scope="col">Name</th><th scope="col">Starts with</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col">Rules</th><th scope="col">Spent this period</th>${viewer.canWrite ? html`<th scope="col">Actions</th>` : ''}</tr></thead>
    <tbody>${view.keys.length === 0 ? html`<tr><td colspan="${viewer.canWrite ? 8 : 7}" class="muted">No keys yet.</td></tr>` : ''}${view.keys.map(
      (key) => html`<tr><td>${key.name}</td><td><code>${key.prefix ?? '(old key)'}</code></td><td>${when(key.createdAt)}</td><td>${when(key.lastUsedAt)}</td><td>${keyState(key)}</td><td data-testid="key-rules">${keyRules(key) || html`<span class="muted">none</span>`}</td><td data-testid="key-spend">${keySpend(key)}</td>${
        viewer.canWrite
          ? html`<td>${
              live(key)
                ? html`${key.expiresAt === null ? html`<form class="inline" method="post" action="${paths.page}/keys/${key.id}/roll" data-confirm="Roll this key? The old one keeps working for 24 hours.">${csrfField(viewer)}<button type="submit" class="secondary" aria-label="Roll key ${key.name}">Roll</button></form> ` : ''}<form class="inline" method="post" action="${paths.page}/keys/${key.id}/revoke" data-confirm="Revoke this key now? Clients using it stop working at once.">${csrfField(viewer)}<button type="submit" class="danger" aria-label="Revoke key ${key.name}">Revoke</button></form>${keySettingsForm(key, paths, viewer)}`
                : ''
            }</td>`
          : ''
      }</tr>`,
    )}</tbody>
  </table></div>
  ${
    viewer.canWrite
      ? html`<form method="post" action="${paths.page}/keys" class="row">${csrfField(viewer)}${formMessage(error, 'key', ['name'])}
    <div><label for="key-name">New key name</label><input type="text" id="key-name" name="name" required placeholder="e.g. production" value="${typed(error, 'key', 'name')}"${invalidAttrs(error, 'key', 'name', 'key-name')}><span class="hint">at most 64 characters</span>${fieldMessage(error, 'key', 'name', 'key-name')}</div>
    <div><button type="submit">Create key</button></div></form>`
      : ''
  }
</section>`;
}

/** The one time a key's secret is shown: with a copy button and a ready curl example. */
export function secretShown(title: string, username: string, apiKey: string, baseUrl: string, back: string): Html {
  const curl = `curl -u '${username}:${apiKey}' ${baseUrl}${DEMO_EXAMPLE_PATH}`;
  return html`<p>${title} Copy it now: <strong>it is shown only this once</strong> and stored only as a hash.</p>
<p class="secret" id="secret" data-testid="secret">${apiKey}</p>
<p><button type="button" data-copy="secret" hidden>Copy key</button></p>
<h2>Try it</h2>
<pre id="curl" data-testid="curl">${curl}</pre>
<p><button type="button" data-copy="curl" hidden>Copy command</button></p>
<p><a href="${back}">Back</a></p>`;
}
