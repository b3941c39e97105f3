import type { ProviderView } from '../../providers/upstream/providers-view.js';
import type { SpendTotals } from '../../providers/upstream/upstream-spend.js';
import { html, type Html } from './html.js';
import { page, when, type Viewer } from './layout.js';
import { routingSection } from './routing-section.js';

const dash = '–';

function balanceCell(p: ProviderView): Html {
  if (!p.balance) return html`${dash}`;
  const { credits, readAt, lastError } = p.balance;
  return html`<strong data-testid="balance">${credits ?? 'unknown'}</strong>${readAt ? html` <span class="muted">read ${when(readAt)}</span>` : ''}${
    lastError ? html`<br><span class="muted">last read failed ${when(lastError.at)}: ${lastError.message}</span>` : ''
  }`;
}

function totalsCells(t: SpendTotals | undefined): Html {
  if (!t) return html`<td class="num">0</td><td class="num">0 / 0 / 0</td><td class="num">0</td><td class="num">0</td>`;
  return html`<td class="num">${t.calls}</td><td class="num">${t.found} / ${t.notFound} / ${t.failed}</td><td class="num">${t.servedFromCache}</td><td class="num">${t.creditsSaved}</td>`;
}

const TOTALS_HEAD = html`<th scope="col" class="num">Calls</th><th scope="col" class="num">Found / not found / failed</th><th scope="col" class="num">Served from cache</th><th scope="col" class="num">Credits saved</th>`;

function providerSection(name: string, p: ProviderView): Html {
  const ops = p.spend?.byOperation ?? [];
  return html`<section aria-labelledby="p-${name}" data-testid="provider-${name}"><h2 id="p-${name}">${name}</h2>
<p>${p.status}${p.reason ? html` <span class="muted">(${p.reason})</span>` : ''}${p.balance ? html` · Balance at the upstream: ${balanceCell(p)}` : ''}</p>
<div class="table-wrap" role="region" aria-label="${name}: calls and credits table" tabindex="0"><table data-testid="spend-${name}">
<thead><tr><th scope="col">Period</th>${TOTALS_HEAD}</tr></thead>
<tbody><tr><th scope="row">Today (UTC)</th>${totalsCells(p.spend?.today)}</tr>
<tr><th scope="row">Last 30 days</th>${totalsCells(p.spend?.last30Days)}</tr></tbody></table></div>
${
  ops.length === 0
    ? ''
    : html`<details><summary>By operation, last 30 days</summary><div class="table-wrap" role="region" aria-label="${name}: calls and credits by operation table" tabindex="0"><table>
<thead><tr><th scope="col">Operation</th>${TOTALS_HEAD}</tr></thead>
<tbody>${ops.map((o) => html`<tr><td>${o.operation === '' ? dash : o.operation}</td>${totalsCells(o)}</tr>`)}</tbody></table></div></details>`
}</section>`;
}

/**
 * The operators' providers page (issue 24): per upstream provider its state, the balance at a
 * paid upstream (the original service), and its spend over every instance: calls today and over
 * 30 days, and the answers the cache served instead (credits saved). The same view as
 * `GET /admin/api/providers`; above it, the paid upstreams as the router sees them and the order
 * it asks them in (issue 32, routing-section.ts).
 */
export function providersPage(viewer: Viewer, providers: Readonly<Record<string, ProviderView>>, order: readonly string[]): string {
  const entries = Object.entries(providers);
  return page(
    'Upstream providers',
    html`<p class="muted">Calls are lookups that asked the provider; "served from cache" are lookups its answer cache answered instead, and "credits saved" those of them with data (what a paid upstream charges for). Every instance adds its counts to the store every <code>LOOKUP_STATS_FLUSH_SECONDS</code>. State and balance are this instance's: the balance is read about once a minute.</p>
${routingSection(providers, order)}
${entries.length === 0 ? html`<p class="muted">No upstream providers; lookups are answered from the local store.</p>` : entries.map(([name, p]) => providerSection(name, p))}
<p><a href="/console/admin">Overview</a> · <a href="/admin/api/docs">Admin API documentation</a></p>`,
    viewer,
  );
}
