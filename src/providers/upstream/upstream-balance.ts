import type { BalanceAlertSink } from '../../alerts/upstream-balance-alerts.js';
import { unrefRepeat, type Repeat } from '../../shared/repeat.js';
import { UpstreamError } from './upstream-error.js';
import type { UpstreamMonitor } from './upstream-monitor.js';


/** How often the balance is read by default: about once a minute (issue 24). */
export const BALANCE_INTERVAL_MS = 60_000;

export interface UpstreamBalanceOptions {
  /** The provider whose balance this is (metrics label, /readyz key). */
  readonly provider: string;
  /** Reads the balance from the upstream; throws (an UpstreamError) when it cannot. */
  readonly read: () => Promise<number>;
  /** Below this the operator is alerted (`upstream.credits.low`). */
  readonly lowCredits: number;
  readonly monitor: UpstreamMonitor;
  readonly intervalMs?: number;
  /** The timer of the reads; unrefRepeat never keeps the process alive. */
  readonly repeat?: Repeat;
  /** Where a failed alert write is reported (the server's logger). */
  readonly log?: { warn(message: string, error?: unknown): void };
}

/**
 * The operator's balance at a paid upstream (the original service's `/ajax/getcredits.aspx`),
 * read at start and every minute whether or not lookups happen, and counted down by one after
 * each answer with data the upstream gave in between (what it charges for), so the gate closes at
 * 0 without waiting for the next read.
 *
 * As a gate (`closedBecause`, the source's LookupOptions.refuse) it closes at 0: the source stops asking, lookups are `unavailable` (free),
 * until a read shows credits again. An unknown balance (before the first read answered, or while
 * reads fail) keeps it open: the upstream's own out-of-credit answer is then the guard.
 *
 * Alerts: `upstream.credits.low` when the balance falls below `lowCredits`, and
 * `upstream.credits.depleted` at 0, each once per crossing (the sink dedupes across instances),
 * re-armed when the balance is back above.
 */
export class UpstreamBalanceWatch {
  private credits: number | undefined;
  private stop: (() => void) | undefined;
  private reading: Promise<void> | undefined;
  /** What this instance last told the sink, so it writes only on a change. */
  private told: { low?: boolean; depleted?: boolean } = {};
  private alerting: Promise<void> = Promise.resolve();
  /** Where alerts go (the operator's webhooks), from `start`; none before it (and in a CLI command). */
  private alerts: BalanceAlertSink | undefined;

  constructor(private readonly options: UpstreamBalanceOptions) {
    options.monitor.subscribe((event) => {
      if (event.type !== 'answer' || event.provider !== options.provider || event.via !== 'upstream' || event.answer !== 'found') return;
      if (this.credits === undefined || this.credits <= 0) return;
      this.update(this.credits - 1, 'counted');
    });
  }

  get provider(): string {
    return this.options.provider;
  }

  /** The balance as last read or counted down; undefined until a read answered. */
  get balance(): number | undefined {
    return this.credits;
  }

  /** Why the upstream must not be asked now (its balance is 0), or undefined when it may be. */
  closedBecause(): string | undefined {
    return this.credits !== undefined && this.credits <= 0 ? 'no credits left at the upstream (balance 0); not asking it until the balance is topped up' : undefined;
  }

  /** Reads now, then every interval; alerts go to `alerts` from now on. */
  start(alerts?: BalanceAlertSink): void {
    if (this.stop) return;
    this.alerts = alerts;
    void this.check();
    this.stop = (this.options.repeat ?? unrefRepeat)(this.options.intervalMs ?? BALANCE_INTERVAL_MS, () => {
      void this.check();
    });
  }

  /** One read (joined by calls while it runs); never rejects. Resolves after its alerts were written. */
  check(): Promise<void> {
    this.reading ??= this.readOnce().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  /** Stops the reads and waits for the one running and for alert writes. */
  async close(): Promise<void> {
    this.stop?.();
    this.stop = undefined;
    await this.reading;
    await this.alerting;
  }

  private async readOnce(): Promise<void> {
    let credits: number;
    try {
      credits = await this.options.read();
    } catch (error) {
      const message = error instanceof UpstreamError ? error.message : error instanceof Error ? `${error.name}: ${error.message}` : 'unknown error';
      this.options.monitor.emit({ type: 'balance', provider: this.options.provider, how: 'error', message });
      return;
    }
    this.update(credits, 'read');
    await this.alerting;
  }

  private update(credits: number, how: 'read' | 'counted'): void {
    this.credits = credits;
    this.options.monitor.emit({ type: 'balance', provider: this.options.provider, credits, how });
    const low = credits < this.options.lowCredits;
    const depleted = credits <= 0;
    const changes: Array<() => Promise<unknown>> = [];
    const sink = this.alerts;
    if (sink) {
      const provider = this.options.provider;
      const details = { credits, threshold: this.options.lowCredits };
      if (this.told.low !== low) changes.push(() => (low ? sink.fire(provider, 'upstream.credits.low', details) : sink.rearm(provider, 'upstream.credits.low')));
      if (this.told.depleted !== depleted) changes.push(() => (depleted ? sink.fire(provider, 'upstream.credits.depleted', { credits, threshold: 0 }) : sink.rearm(provider, 'upstream.credits.depleted')));
    }
    if (changes.length === 0) return;
    const told = { low, depleted };
    // Alert writes run one after another, off the lookup that counted the balance down.
    this.alerting = this.alerting.then(async () => {
      try {
        for (const change of changes) await change();
        this.told = told;
      } catch (error) {
        // Not remembered as told: the next read tries again.
        this.options.log?.warn(`the balance alert of ${this.options.provider} was not written`, error);
      }
    });
  }
}
