import type { UpstreamAlertSink } from '../../alerts/upstream-balance-alerts.js';
import type { PaidUpstreamSettings } from '../../config/paid-upstream-config.js';
import type { Clock } from '../../shared/clock.js';
import type { UpstreamEvent, UpstreamMonitor } from '../upstream/upstream-monitor.js';
import { MICROS, toMicros, type SharedOutState, type StoredOutState, type UpstreamStateRepository } from '../upstream/upstream-state.repository.js';

/** How long an upstream that said "out of funds" stays out before one call asks again (its answer's balance, or the original's balance read, may bring it back sooner). */
export const OUT_OF_FUNDS_RETRY_MS = 10 * 60_000;
/** The share of a monthly budget at which the operator is warned. */
export const BUDGET_WARNING_SHARE = 0.8;

/** What the console and `/admin/api/providers` say of a paid upstream's state. */
export type RoutingState = 'ready' | 'cooling-down' | 'out-of-funds' | 'quota' | 'over-budget' | 'disabled';

/** A paid upstream as the router sees it now, for the operator. */
export interface PolicyStatus {
  readonly state: RoutingState;
  /** Why it is not ready; absent when it is. */
  readonly reason?: string;
  /** When it may be asked again, where known (ISO 8601). */
  readonly until?: string;
  /** The price the router ranks it by: its own last price signal, else `<NAME>_PRICE`; null when neither is known. */
  readonly price: number | null;
  readonly priceFrom: 'provider' | 'configured' | 'unknown';
  readonly configuredPrice: number | null;
  readonly monthlyBudget: number | null;
  /** Spend and calls that cost it, every instance summed, in the currency. */
  readonly spendToday: { readonly spent: number; readonly calls: number };
  readonly spendThisMonth: { readonly spent: number; readonly calls: number };
  /** The balance its last answer told (UKVD's AccountBalance, Vincario's balance); null when none did. */
  readonly balance: number | null;
  readonly lastError: { readonly at: string; readonly kind: string; readonly message: string } | null;
}

const day = (d: Date): string => d.toISOString().slice(0, 10);
const monthStart = (d: Date): string => `${d.toISOString().slice(0, 7)}-01`;
const nextMonth = (d: Date): Date => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
const nextDay = (d: Date): Date => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1));

/** What the policy reads and writes of the shared state (UpstreamStateRepository). */
export type UpstreamStates = Pick<UpstreamStateRepository, 'state' | 'gateState' | 'takeOut' | 'bringBack' | 'addSpend' | 'spend'>;

export interface UpstreamPolicyOptions {
  readonly settings: PaidUpstreamSettings;
  readonly monitor: UpstreamMonitor;
  readonly clock: Clock;
  /** The store every instance shares: out states and spend. */
  readonly states: UpstreamStates;
  readonly log?: { warn(message: string, error?: unknown): void } | undefined;
  /** UPSTREAM_CURRENCY: a provider's price signal in another currency is not used. */
  readonly currency?: string | undefined;
}

/**
 * The router's policy for one paid upstream (issue 32; commercial-upstreams.md §5 and §10): the
 * adapter classifies each answer once (UpstreamError's kind, FetchOutcome's cost and balance) and
 * this reads those classifications from the monitor's answer events, so no adapter branches on
 * policy:
 * - found: its cost (the provider's own price signal, else `<NAME>_PRICE`) is added to the day's
 *   spend in the store, and an out-of-funds or quota state ends (the provider answered);
 * - `out-of-funds`: out for every instance until OUT_OF_FUNDS_RETRY_MS has passed or a balance
 *   says otherwise (an answer's balance, the original's balance read above 0);
 * - `quota`: out for every instance until the next UTC day (the providers' daily limits);
 * - `auth`: disabled for every instance, never asked again until a restart (the operator fixing
 *   the key restarts the service);
 * - a monthly budget reached: not asked until the month turns (the spend in the store says it).
 * Each of these alerts the operator once (UpstreamAlertSink); the budget at 80 % and 100 %.
 * Unavailable answers of other kinds are the breaker's (UpstreamSource), not this.
 */
export class UpstreamPolicy {
  private lastCost: number | undefined;
  private balance: number | undefined;
  private lastError: PolicyStatus['lastError'] = null;
  private readonly pending = new Set<Promise<void>>();
  /** What this instance's writes under way will change in the store, laid over its reads by gate(). */
  private readonly unwritten: { out: OutChange | undefined; spendMicros: number } = { out: undefined, spendMicros: 0 };
  private alerts: UpstreamAlertSink | undefined;
  /** The currencies of price signals this instance left unused, each said in the log once. */
  private readonly foreignCurrencies = new Set<string>();
  /** The month whose budget alerts this instance re-armed (once a month, at its first call). */
  private rearmedMonth = '';

  constructor(private readonly options: UpstreamPolicyOptions) {
    options.monitor.subscribe((event) => {
      if (event.type === 'answer' && event.provider === options.settings.name) this.onAnswer(event);
      // The original's balance watch read a positive balance: out of funds is over.
      if (event.type === 'balance' && event.provider === options.settings.name && event.how === 'read' && (event.credits ?? 0) > 0) {
        this.track(this.bringBack(['quota', 'disabled']));
      }
    });
  }

  get name(): string {
    return this.options.settings.name;
  }

  get settings(): PaidUpstreamSettings {
    return this.options.settings;
  }

  /** The price the router ranks by: the provider's own last price signal wins over `<NAME>_PRICE`. */
  get price(): number | undefined {
    return this.lastCost ?? this.options.settings.price;
  }

  /**
   * Starts alerting (the server; a CLI command never does) and re-arms a refused key: a restart is
   * how the operator puts a fixed key in, so it is asked again, once.
   */
  async start(alerts?: UpstreamAlertSink): Promise<void> {
    this.alerts = alerts;
    try {
      if (await this.options.states.bringBack(this.name, ['out-of-funds', 'quota'])) await this.alerts?.rearm(this.name, 'upstream.disabled');
    } catch (error) {
      this.options.log?.warn(`the state of ${this.name} could not be reset in the store`, error);
    }
  }

  /** Resolves when this instance's writes about the upstream (spend, states, alerts) are done. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /**
   * Why the upstream must not be asked now, for every instance (UpstreamContext.gate): a stored
   * out state whose time has not come, or the month's budget spent. One statement per call
   * (UpstreamStateRepository.gateState), none on cached answers. It does not wait for this
   * instance's writes still under way: what they will write (`unwritten`) is laid over what the
   * store says, so concurrent paid calls of one instance are not queued behind each other's spend.
   * A store that cannot be read lets the call go (the provider's own answer is then the guard).
   */
  async gate(): Promise<string | undefined> {
    const now = this.options.clock.now();
    const budget = this.options.settings.monthlyBudget;
    try {
      const stored = budget === undefined ? { out: await this.options.states.state(this.name), spent: undefined } : await this.options.states.gateState(this.name, monthStart(now), day(now));
      const out = this.unwritten.out === undefined ? stored.out : this.unwritten.out.applied(stored.out);
      if (out && (out.until === null || Date.parse(out.until) > now.getTime())) return describe(out);
      if (budget !== undefined && stored.spent !== undefined) {
        const spent = (toMicros(stored.spent.spent) + this.unwritten.spendMicros) / MICROS;
        if (spent < budget * BUDGET_WARNING_SHARE) await this.rearmBudget(now);
        if (spent >= budget) return `over its monthly budget (${spent} of ${budget} spent); not asked until ${nextMonth(now).toISOString()}`;
      }
    } catch (error) {
      this.options.log?.warn(`the routing state of ${this.name} could not be read from the store`, error);
    }
    return undefined;
  }

  /** The state for the operator, every instance's figures from the store; `coolingDown` is the breaker's (this instance's). */
  async status(coolingDown?: { readonly until?: string }): Promise<PolicyStatus> {
    await this.settled();
    const now = this.options.clock.now();
    const { states, settings } = this.options;
    const [out, today, month] = await Promise.all([states.state(this.name), states.spend(this.name, day(now), day(now)), states.spend(this.name, monthStart(now), day(now))]);
    let state: RoutingState = 'ready';
    let reason: string | undefined;
    let until: string | undefined;
    if (out && (out.until === null || Date.parse(out.until) > now.getTime())) {
      state = out.state;
      reason = out.reason;
      until = out.until ?? undefined;
    } else if (settings.monthlyBudget !== undefined && month.spent >= settings.monthlyBudget) {
      state = 'over-budget';
      reason = `monthly budget of ${settings.monthlyBudget} spent`;
      until = nextMonth(now).toISOString();
    } else if (coolingDown) {
      state = 'cooling-down';
      reason = 'repeated failures: the circuit breaker is open';
      until = coolingDown.until;
    }
    const price = this.price;
    return {
      state,
      ...(reason !== undefined ? { reason } : {}),
      ...(until !== undefined ? { until } : {}),
      price: price ?? null,
      priceFrom: this.lastCost !== undefined ? 'provider' : settings.price !== undefined ? 'configured' : 'unknown',
      configuredPrice: settings.price ?? null,
      monthlyBudget: settings.monthlyBudget ?? null,
      spendToday: today,
      spendThisMonth: month,
      balance: this.balance ?? null,
      lastError: this.lastError,
    };
  }

  private onAnswer(event: Extract<UpstreamEvent, { type: 'answer' }>): void {
    if (event.via !== 'upstream') return;
    const now = this.options.clock.now();
    if (event.answer === 'found') {
      const signal = this.costSignal(event);
      if (signal !== undefined) this.lastCost = signal;
      if (event.balance !== undefined) this.balance = event.balance;
      const cost = signal ?? this.options.settings.price ?? 0;
      this.track(this.spend(toMicros(cost), now));
      this.track(this.bringBack(['disabled']));
      return;
    }
    if (event.answer !== 'unavailable' || !event.failure) return;
    this.lastError = { at: now.toISOString(), kind: event.failure.kind, message: event.failure.message };
    const out = outStateOf(event.failure.kind, event.failure.message, now);
    if (out) this.track(this.takeOut(out));
  }

  /**
   * The provider's own price for this call, when it is in the operator's currency: a price in
   * another currency (Vincario's `price_currency`) is not converted but left unused, once said in
   * the log, and the configured `<NAME>_PRICE` stands.
   */
  private costSignal(event: Extract<UpstreamEvent, { type: 'answer' }>): number | undefined {
    if (event.cost === undefined) return undefined;
    const currency = this.options.currency;
    if (event.costCurrency === undefined || currency === undefined || event.costCurrency === currency) return event.cost;
    if (!this.foreignCurrencies.has(event.costCurrency)) {
      this.foreignCurrencies.add(event.costCurrency);
      this.options.log?.warn(`${this.name} priced a call in ${event.costCurrency}, not in UPSTREAM_CURRENCY ${currency}: its price signal is not used (nothing is converted); the configured price stands`);
    }
    return undefined;
  }

  private track(work: Promise<void>): void {
    const running = work
      .catch((error: unknown) => {
        this.options.log?.warn(`the routing state of ${this.name} could not be written to the store`, error);
      })
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  }

  private async takeOut(out: StoredOutState): Promise<void> {
    // The store's upsert: the last writer's state stands.
    const change = this.change(() => out);
    try {
      await this.options.states.takeOut(this.name, out);
    } finally {
      this.written(change);
    }
    const event = out.state === 'disabled' ? 'upstream.disabled' : 'upstream.out-of-funds';
    await this.alerts?.notify(this.name, event, { state: out.state, reason: out.reason, until: out.until });
  }

  private async bringBack(keep: readonly SharedOutState[]): Promise<void> {
    const change = this.change((stored) => (stored && keep.includes(stored.state) ? stored : undefined));
    let brought: boolean;
    try {
      brought = await this.options.states.bringBack(this.name, keep);
    } finally {
      this.written(change);
    }
    if (brought) await this.alerts?.rearm(this.name, 'upstream.out-of-funds');
  }

  private async spend(micros: number, now: Date): Promise<void> {
    const { states, settings, monitor } = this.options;
    this.unwritten.spendMicros += micros;
    try {
      await states.addSpend(this.name, day(now), micros);
    } finally {
      this.unwritten.spendMicros -= micros;
    }
    // The spend metric counts what the store now holds, no more and no less (routing-metrics.ts).
    monitor.emit({ type: 'spend', provider: this.name, amount: micros / MICROS });
    const budget = settings.monthlyBudget;
    if (budget === undefined || !this.alerts) return;
    const spent = (await states.spend(this.name, monthStart(now), day(now))).spent;
    const details = { budget, spent, month: monthStart(now).slice(0, 7) };
    if (spent >= budget * BUDGET_WARNING_SHARE) await this.alerts.notify(this.name, 'upstream.budget.warning', details);
    if (spent >= budget) await this.alerts.notify(this.name, 'upstream.budget.reached', details);
  }

  /** Records a change of the out state about to be written; the newest stands over the older ones until it is written. */
  private change(applied: OutChange['applied']): OutChange {
    const change: OutChange = { applied };
    this.unwritten.out = change;
    return change;
  }

  /** The change is in the store (or failed to get there): the store's word stands again, unless a newer change is under way. */
  private written(change: OutChange): void {
    if (this.unwritten.out === change) this.unwritten.out = undefined;
  }

  /** A new month's spend is below the warning: its alerts may fire again (once per month per instance). */
  private async rearmBudget(now: Date): Promise<void> {
    const month = monthStart(now);
    if (this.rearmedMonth === month || !this.alerts) return;
    this.rearmedMonth = month;
    await this.alerts.rearm(this.name, 'upstream.budget.warning');
    await this.alerts.rearm(this.name, 'upstream.budget.reached');
  }
}

/** A change of the out state this instance is writing: what the store will say once it is written, given what it says now. */
interface OutChange {
  readonly applied: (stored: StoredOutState | undefined) => StoredOutState | undefined;
}

/** The shared out state a failure kind means (commercial-upstreams.md §10 "Mapping"), or undefined for the breaker's kinds. */
function outStateOf(kind: string, message: string, now: Date): StoredOutState | undefined {
  const changedAt = now.toISOString();
  switch (kind) {
    case 'out-of-funds':
      return { state: 'out-of-funds', reason: message, until: new Date(now.getTime() + OUT_OF_FUNDS_RETRY_MS).toISOString(), changedAt };
    case 'quota':
      return { state: 'quota', reason: message, until: nextDay(now).toISOString(), changedAt };
    case 'auth':
      return { state: 'disabled', reason: message, until: null, changedAt };
    default:
      return undefined;
  }
}

function describe(out: StoredOutState): string {
  const when = out.until === null ? (out.state === 'disabled' ? 'until the service restarts with a working key' : 'until its balance says otherwise') : `until ${out.until}`;
  return `${out.state === 'disabled' ? 'disabled (credentials refused)' : out.state === 'quota' ? 'out of quota' : 'out of funds'}: ${out.reason}; not asked ${when}`;
}
