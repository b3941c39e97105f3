import type { RoutingState } from '../../providers/routing/upstream-policy.js';
import type { ProviderView } from '../../providers/upstream/providers-view.js';
import { html, type Html } from './html.js';
import { when } from './layout.js';

type Routing = NonNullable<ProviderView['routing']>;

const dash = '–';

/** Each routing state as the page words it. */
const STATE_LABEL: Record<RoutingState, string> = {
  ready: 'ready',
  'cooling-down': 'cooling down',
  'out-of-funds': 'out of funds',
  quota: 'out of quota',
  'over-budget': 'over budget',
  disabled: 'disabled',
};

/** An amount in the operator's currency as the console shows it: "GBP 12.40", two decimals at least, up to the millionths the store keeps. */
export function money(amount: number, currency: string): string {
  return `${currency} ${amount.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
}

/** The variable that configures a paid upstream's price (readPaidUpstream reads `<NAME>_PRICE`). */
const priceVariable = (name: string): string => `${name.toUpperCase().replace(/-/g, '_')}_PRICE`;

function stateCell(r: Routing): Html {
  return html`<strong data-testid="state">${STATE_LABEL[r.state]}</strong>${r.reason !== undefined ? html`<br><span class="muted">${r.reason}</span>` : ''}${
    r.until !== undefined ? html`<br><span class="muted">until ${when(r.until)}</span>` : ''
  }`;
}

function priceCell(name: string, r: Routing): Html {
  if (r.price === null) return html`<span class="muted">unknown: no <code>${priceVariable(name)}</code> and no price from the provider yet</span>`;
  const from =
    r.priceFrom === 'provider'
      ? html`the provider's own price${r.configuredPrice !== null && r.configuredPrice !== r.price ? html` (<code>${priceVariable(name)}</code> ${money(r.configuredPrice, r.currency)})` : ''}`
      : html`<code>${priceVariable(name)}</code>`;
  return html`${money(r.price, r.currency)}<br><span class="muted">${from}</span>`;
}

const spendCell = (s: Routing['spendToday'], currency: string): Html => html`${money(s.spent, currency)}<br><span class="muted">${s.calls} call${s.calls === 1 ? '' : 's'}</span>`;

function budgetCell(r: Routing): Html {
  if (r.monthlyBudget === null) return html`<span class="muted">none</span>`;
  const used = r.monthlyBudget === 0 ? 100 : Math.floor((r.spendThisMonth.spent / r.monthlyBudget) * 100);
  return html`${money(r.monthlyBudget, r.currency)}<br><span class="muted">${used} % used</span>`;
}

function lastErrorCell(r: Routing): Html {
  if (!r.lastError) return html`<span class="muted">none</span>`;
  return html`${r.lastError.kind}: ${r.lastError.message}<br><span class="muted">${when(r.lastError.at)}</span>`;
}

/**
 * The paid upstreams as the router sees them (issue 32 "What the operator sees"): the order it
 * would ask them in now (UpstreamRouter.order: UPSTREAM_ORDER first, then cheapest first), and per
 * upstream its state with why and until when, its price and where it comes from, spend and calls
 * today and this month in UPSTREAM_CURRENCY, its monthly budget and the share used, its balance
 * where its answers tell it, and its last error. Empty when no paid upstream is routed.
 */
export function routingSection(providers: Readonly<Record<string, ProviderView>>, order: readonly string[]): Html | string {
  const routed = Object.entries(providers).flatMap(([name, p]) => (p.routing ? [[name, p.routing] as const] : []));
  if (routed.length === 0) return '';
  const byName = new Map(routed);
  const currency = routed[0]?.[1].currency ?? '';
  return html`<section aria-labelledby="routing-h" data-testid="routing"><h2 id="routing-h">Paid upstreams: routing</h2>
<p class="muted">Prices, spend and budgets are in ${currency} (<code>UPSTREAM_CURRENCY</code>); spend is every instance's, from the store. An upstream that is not ready is skipped until the time shown; one that answers "not found" ends the lookup unless <code>UPSTREAM_FALLBACK_ON_NOT_FOUND</code> is set.</p>
<h3 id="routing-order-h">Order of asking</h3>
<p class="muted">For each operation the router asks the paid upstreams that serve it in this order: those named in <code>UPSTREAM_ORDER</code> first, then the cheapest first.</p>
<ol aria-labelledby="routing-order-h" data-testid="routing-order">${order.map((name) => {
    const r = byName.get(name);
    if (!r) return html`<li>${name}</li>`;
    return html`<li><strong>${name}</strong>: ${r.price === null ? 'price unknown' : money(r.price, r.currency)}, ${STATE_LABEL[r.state]}${r.state === 'ready' ? '' : ' (skipped)'}</li>`;
  })}</ol>
<h3 id="routing-state-h">State, price, spend and budget</h3>
<div class="table-wrap" role="region" aria-labelledby="routing-state-h" tabindex="0"><table data-testid="routing-table">
<thead><tr><th scope="col">Upstream</th><th scope="col">State</th><th scope="col">Price</th><th scope="col" class="num">Spend today (UTC)</th><th scope="col" class="num">Spend this month</th><th scope="col" class="num">Monthly budget</th><th scope="col" class="num">Balance</th><th scope="col">Last error</th></tr></thead>
<tbody>${routed.map(
    ([name, r]) =>
      html`<tr data-testid="routing-${name}"><th scope="row">${name}</th><td>${stateCell(r)}</td><td>${priceCell(name, r)}</td><td class="num" data-testid="spend-today">${spendCell(r.spendToday, r.currency)}</td><td class="num" data-testid="spend-month">${spendCell(
        r.spendThisMonth,
        r.currency,
      )}</td><td class="num">${budgetCell(r)}</td><td class="num">${r.balance === null ? dash : r.balance.toLocaleString('en', { maximumFractionDigits: 6 })}</td><td>${lastErrorCell(r)}</td></tr>`,
  )}</tbody></table></div></section>`;
}
