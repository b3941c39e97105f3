import type { BalanceAlertSink } from '../../alerts/upstream-balance-alerts.js';
import { unrefRepeat, type Repeat } from '../../shared/repeat.js';
import { UpstreamError } from './upstream-error.js';
import type { UpstreamMonitor } from './upstream-monitor.js';


/** How often the balance is read by default: about once a minute (issue 24). */
export const BALANCE_INTERVAL_MS = 60_000;

/**
 * The balance as every instance on the store shares it (UpstreamBalanceRepository, bound to one
 * provider): what a read found, each credit spent, and the figure to show and gate on.
 */
export interface SharedBalance {
  publish(credits: number, readAt: string): Promise<void>;
  /** One credit spent; answers the shared balance after it (undefined when none is stored). */
  countDown(): Promise<number | undefined>;
  latest(): Promise<{ readonly credits: number } | undefined>;
}

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
  /**
   * The balance shared with the other instances on the store: reads are written there, each
   * credit spent is counted down there, and the gate and the figure shown follow it. Without it
   * the balance is this instance's own.
   */
  readonly shared?: SharedBalance;
  /** The time of a read (the shared row's read_at). */
  readonly now?: () => Date;
}

/**
 * The operator's balance at a paid upstream (the original service's `/ajax/getcredits.aspx`),
 * read at start and every minute whether or not lookups happen, and counted down by one after
 * each answer with data the upstream gave in between (what it charges for), so the gate closes at
 * 0 without waiting for the next read. With `shared` (the store) the figure is every instance's:
 * reads and count-downs go to the store, and the gate and the figure shown are read from it, so
 * an instance stops at 0 when another spent the last credit.
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

  /** Count-downs of the shared balance not yet answered (settled() waits for them). */
  private readonly counting = new Set<Promise<void>>();

  constructor(private readonly options: UpstreamBalanceOptions) {
    options.monitor.subscribe((event) => {
      if (event.type !== 'answer' || event.provider !== options.provider || event.via !== 'upstream' || event.answer !== 'found') return;
      const { shared } = options;
      if (shared) {
        // Off the lookup that was charged: the lookup is answered meanwhile; this instance's next
        // gate waits for it (settled), other instances see it once it is written.
        const counted: Promise<void> = shared
          .countDown()
          .then(
            (credits) => {
              if (credits !== undefined) this.update(credits, 'counted');
            },
            (error: unknown) => {
              this.options.log?.warn(`the balance of ${options.provider} could not be counted down in the store`, error);
            },
          )
          .finally(() => this.counting.delete(counted));
        this.counting.add(counted);
        return;
      }
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

  /**
   * The gate before an upstream call (the source's LookupOptions.refuse): closedBecause on the
   * shared balance, after this instance's own count-downs were written and the figure every
   * instance wrote was read. One primary-key read per upstream call, none on cached answers.
   */
  gate(): string | undefined | Promise<string | undefined> {
    if (!this.options.shared) return this.closedBecause();
    return this.refresh().then(() => this.closedBecause());
  }

  /** Resolves when this instance's count-downs of the shared balance are written. */
  async settled(): Promise<void> {
    while (this.counting.size > 0) await Promise.all([...this.counting]);
  }

  /**
   * Takes the shared balance (what any instance last read or counted down) as this instance's
   * figure; never rejects (a failed read keeps the figure). Without a shared balance, nothing.
   */
  async refresh(): Promise<void> {
    const { shared } = this.options;
    if (!shared) return;
    await this.settled();
    try {
      const latest = await shared.latest();
      if (latest !== undefined && latest.credits !== this.credits) this.update(latest.credits, 'shared');
    } catch (error) {
      this.options.log?.warn(`the shared balance of ${this.options.provider} could not be read from the store`, error);
    }
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

  /** Stops the reads and waits for the one running, for count-downs and for alert writes. */
  async close(): Promise<void> {
    this.stop?.();
    this.stop = undefined;
    await this.reading;
    await this.settled();
    await this.alerting;
  }

  private async readOnce(): Promise<void> {
    let credits: number;
    try {
      credits = await this.options.read();
    } catch (error) {
      const message = error instanceof UpstreamError ? error.message : error instanceof Error ? `${error.name}: ${error.message}` : 'unknown error';
      this.options.monitor.emit({ type: 'balance', provider: this.options.provider, how: 'error', message });
      // Another instance's read may have succeeded: show and gate on it.
      await this.refresh();
      await this.alerting;
      return;
    }
    const { shared } = this.options;
    if (shared) {
      try {
        await shared.publish(credits, (this.options.now?.() ?? new Date()).toISOString());
      } catch (error) {
        this.options.log?.warn(`the balance of ${this.options.provider} could not be written to the store`, error);
      }
    }
    this.update(credits, 'read');
    await this.alerting;
  }

  private update(credits: number, how: 'read' | 'counted' | 'shared'): void {
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
