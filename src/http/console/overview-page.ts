import type { Account } from '../../accounts/account.js';
import type { UsageRow } from '../../accounts/ledger-queries.js';
import type { InterfaceStats } from '../../ops/lookup-stats.repository.js';
import type { ProviderStatus } from '../../providers/upstream/upstream-monitor.js';
import { html, type Html } from './html.js';
import { page, when, type Viewer } from './layout.js';
import { accountsTable } from './operator-pages.js';
import { usageChart } from './usage-chart.js';

/** An account at or below this balance is listed as close to zero on the overview. */
export const LOW_BALANCE = 20;
/** The overview lists at most this many accounts close to zero (the lowest balances). */
export const LOW_BALANCE_LISTED = 50;

/** What the operator overview shows (src/http/console/overview.routes.ts reads it). */
export interface OverviewInput {
  /** Every account, open or not. */
  readonly accounts: number;
  /** Open, enabled accounts at or below LOW_BALANCE: the lowest ones, and how many there are. */
  readonly low: { readonly accounts: readonly Account[]; readonly total: number };
  /** Charged lookups and credits of every account by day and operation, over `days`. */
  readonly usage: readonly UsageRow[];
  readonly days: readonly string[];
  /** Lookups per interface over every instance: the last 24 hours and the last 30 days. */
  readonly rates: { readonly day: readonly InterfaceStats[]; readonly month: readonly InterfaceStats[] };
  readonly upstream: Readonly<Record<string, ProviderStatus>>;
}

/** Upstream providers as /readyz reports them: breaker, last latency, failed attempts, last failure. */
function upstreamTable(providers: Readonly<Record<string, ProviderStatus>>): Html {
  const rows = Object.entries(providers);
  return html`<div class="table-wrap" role="region" aria-label="Upstream providers table" tabindex="0"><table data-testid="upstream">
  <thead><tr><th scope="col">Provider</th><th scope="col">Status</th><th scope="col">Breaker</th><th scope="col" class="num">Last latency (ms)</th><th scope="col" class="num">Requests failed / total</th><th scope="col" class="num">Lookups upstream / cache / unavailable</th><th scope="col">Last failure</th></tr></thead>
  <tbody>${
    rows.length === 0
      ? html`<tr><td colspan="7" class="muted">No upstream providers; lookups are answered from the local store.</td></tr>`
      : rows.map(
          ([name, p]) => html`<tr><td>${name}</td><td>${p.status}${p.reason ? html` <span class="muted">(${p.reason})</span>` : ''}</td><td>${p.breaker ?? '–'}${p.retryAt ? html` <span class="muted">until ${when(p.retryAt)}</span>` : ''}</td><td class="num">${p.lastLatencyMs ?? '–'}</td><td class="num">${p.requests ? `${p.requests.failed} / ${p.requests.total}` : '–'}</td><td class="num">${p.lookups ? `${p.lookups.upstream} / ${p.lookups.cache} / ${p.lookups.unavailable}` : '–'}</td><td>${p.lastFailure ? html`${when(p.lastFailure.at)} ${p.lastFailure.kind}: ${p.lastFailure.message}` : '–'}</td></tr>`,
        )
  }</tbody>
</table></div>`;
}

/** A success rate as a percentage with one decimal, or a dash without lookups. */
function percent(rate: number | null): string {
  return rate === null ? '–' : `${(Math.floor(rate * 1000) / 10).toFixed(1)} %`;
}

function errorList(stats: InterfaceStats | undefined): Html | string {
  const entries = Object.entries(stats?.errors ?? {});
  return entries.length === 0 ? '–' : html`<ul class="codes">${entries.map(([code, n]) => html`<li><code>${code}</code> ${n}</li>`)}</ul>`;
}

/**
 * Lookups, success rate and errors by code per interface, for the last 24 hours and the last 30
 * days side by side. A rate is floored, so 99.96 % shows as 99.9 % and never as 100 % while any
 * lookup failed.
 */
function ratesTable(rates: OverviewInput['rates']): Html {
  const names = [...new Set([...rates.day, ...rates.month].map((s) => s.interface))].sort();
  const day = new Map(rates.day.map((s) => [s.interface, s]));
  const month = new Map(rates.month.map((s) => [s.interface, s]));
  const cells = (s: InterfaceStats | undefined) => html`<td class="num">${s?.total ?? 0}</td><td class="num">${percent(s?.successRate ?? null)}</td><td>${errorList(s)}</td>`;
  return html`<div class="table-wrap" role="region" aria-label="Lookups by interface table" tabindex="0"><table data-testid="rates">
  <thead>
    <tr><th scope="col" rowspan="2">Interface</th><th scope="colgroup" colspan="3">Last 24 hours</th><th scope="colgroup" colspan="3">Last 30 days</th></tr>
    <tr><th scope="col" class="num">Lookups</th><th scope="col" class="num">Success</th><th scope="col">Errors by code</th><th scope="col" class="num">Lookups</th><th scope="col" class="num">Success</th><th scope="col">Errors by code</th></tr>
  </thead>
  <tbody>${
    names.length === 0
      ? html`<tr><td colspan="7" class="muted">No lookups recorded yet.</td></tr>`
      : names.map((name) => html`<tr data-interface="${name}"><td>${name}</td>${cells(day.get(name))}${cells(month.get(name))}</tr>`)
  }</tbody>
</table></div>`;
}

/** The operator overview (issue 18): usage, success and error rates, providers, accounts close to zero. */
export function overviewPage(viewer: Viewer, input: OverviewInput): string {
  const shown = input.low.accounts.length;
  return page(
    'Overview',
    html`<div class="figures"><div class="figure"><div class="muted">Accounts</div><div class="value" data-testid="accounts-total">${input.accounts}</div></div>
<div class="figure"><div class="muted">Close to zero (≤ ${LOW_BALANCE} credits)</div><div class="value" data-testid="low-total">${input.low.total}</div></div></div>
<section aria-labelledby="usage"><h2 id="usage">Usage of every account</h2>
${usageChart(input.usage, input.days, 'lookups', 'Charged lookups per day and operation, last 30 days (UTC)')}
${usageChart(input.usage, input.days, 'credits', 'Credits debited per day and operation, last 30 days (UTC)')}</section>
<section aria-labelledby="rates"><h2 id="rates">Success and error rates per interface</h2>
<p class="muted">Every lookup answered by every instance, by the hour it finished in (UTC). Each instance adds its counts to the store every <code>LOOKUP_STATS_FLUSH_SECONDS</code> (10 s by default), so the last few seconds may be missing.</p>
${ratesTable(input.rates)}</section>
<section aria-labelledby="upstream"><h2 id="upstream">Upstream providers</h2>
<p class="muted">As <code>/readyz</code> reports them, since this process started. Calls, cache answers and balances: <a href="/console/admin/providers">Providers</a>.</p>
${upstreamTable(input.upstream)}</section>
<section aria-labelledby="low"><h2 id="low">Accounts close to zero</h2>
<p class="muted">Open, enabled accounts with at most ${LOW_BALANCE} credits, lowest first${input.low.total > shown ? html`; the ${shown} lowest of ${input.low.total}` : ''}.</p>
${accountsTable(input.low.accounts)}</section>
<p><a href="/console/admin/accounts">All accounts</a> · <a href="/console/admin/audit">Audit log</a> · <a href="/admin/api/docs">Admin API documentation</a></p>`,
    viewer,
  );
}
