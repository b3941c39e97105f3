import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { LookupObserver } from '../lookup/lookup-request.js';
import { DEFAULT_ROUTING } from '../config/paid-upstream-config.js';
import { registerRoutingMetrics, type RoutingMetrics } from '../providers/routing/routing-metrics.js';
import { registerUpstreamMetrics } from '../providers/upstream/upstream-metrics.js';
import { UpstreamMonitor } from '../providers/upstream/upstream-monitor.js';
import { DeferredCounter, type CounterSlot } from './deferred-counter.js';
import type { LookupCounts, RollupSlot } from './lookup-rollup.js';

/** Prometheus metrics of one app instance (its own registry, so tests can build many apps). */
export class Metrics implements LookupObserver {
  readonly registry = new Registry();
  // Updated on every request: deferred counters (a number addition per update).
  private readonly lookups: DeferredCounter<'operation' | 'interface' | 'outcome'>;
  private readonly latency: Histogram<'interface' | 'outcome'>;
  private readonly credits: DeferredCounter<'operation' | 'interface'>;
  private readonly httpRequests: DeferredCounter<'method' | 'route' | 'status'>;
  private readonly rateLimited: Counter<'window' | 'interface'>;
  /** Free lookups answered whose ledger row could not be written (LookupCharging.free). */
  private readonly freeRowsLost: Counter<'interface' | 'reason'>;
  private readonly debitReversals: Counter<'interface' | 'outcome'>;
  /** Connections closed on arrival because MAX_CONNECTIONS were open (issue 17 item 5). */
  readonly connectionsDropped: Counter;
  /** Rate-limited requests counted in-process because Redis did not answer (fail open, issue 5). */
  readonly rateLimitFallbacks: Counter;
  /** Login attempts and admin/console requests counted in-process because Redis did not answer (issue 16). */
  readonly throttleFallbacks: Counter;
  /**
   * The upstream providers' state and events. The services find it on this object (it is their
   * LookupObserver, see `monitorOf`); /readyz shows its snapshot.
   */
  readonly upstream = new UpstreamMonitor();

  /** The router's spend and state metrics; app.ts gives them the router (`routing.watch`) once it is built. */
  readonly routing: RoutingMetrics;

  /**
   * @param rollup this process's lookups by hour, interface, operation and outcome for the store
   *   (LookupRollup writes them), counted here beside the lookups metric so both see the same events.
   * @param currency UPSTREAM_CURRENCY, the spend metric's `currency` label.
   */
  constructor(
    private readonly rollup?: LookupCounts,
    currency: string = DEFAULT_ROUTING.currency,
  ) {
    collectDefaultMetrics({ register: this.registry, prefix: 'vehicle_lookup_' });
    this.lookups = new DeferredCounter(this.registry, 'vehicle_lookup_lookups_total', 'Lookups by operation, interface and outcome (success or the error code)', [
      'operation',
      'interface',
      'outcome',
    ]);
    this.latency = new Histogram({
      name: 'vehicle_lookup_lookup_duration_seconds',
      help: 'Time to answer a lookup, from authentication to the debit',
      labelNames: ['interface', 'outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    this.credits = new DeferredCounter(this.registry, 'vehicle_lookup_credits_debited_total', 'Credits debited by successful lookups', ['operation', 'interface']);
    this.rateLimited = new Counter({
      name: 'vehicle_lookup_rate_limited_total',
      help: "Requests refused by the account's rate limit, by window (second or day) and interface",
      labelNames: ['window', 'interface'],
      registers: [this.registry],
    });
    this.freeRowsLost = new Counter({
      name: 'vehicle_lookup_free_ledger_rows_lost_total',
      help: 'Free lookups (test plates, results with nothing to charge, Idempotency-Key replays) answered although their ledger row could not be written',
      labelNames: ['interface', 'reason'],
      registers: [this.registry],
    });
    this.debitReversals = new Counter({
      name: 'vehicle_lookup_debit_reversals_total',
      help: 'Committed debits whose answer could not be written to the client (the connection closed first): given back (outcome reversed), or not (outcome failed: the debit stands, logged with its request id)',
      labelNames: ['interface', 'outcome'],
      registers: [this.registry],
    });
    this.rateLimitFallbacks = new Counter({
      name: 'vehicle_lookup_rate_limit_fallbacks_total',
      help: 'Requests of rate-limited accounts counted in-process because Redis did not answer',
      registers: [this.registry],
    });
    this.throttleFallbacks = new Counter({
      name: 'vehicle_lookup_throttle_fallbacks_total',
      help: 'Login attempts and admin, account or console API requests counted in-process because Redis did not answer',
      registers: [this.registry],
    });
    this.connectionsDropped = new Counter({
      name: 'vehicle_lookup_connections_dropped_total',
      help: 'Connections closed on arrival because MAX_CONNECTIONS connections were open',
      registers: [this.registry],
    });
    this.httpRequests = new DeferredCounter(this.registry, 'vehicle_lookup_http_requests_total', 'HTTP requests by method, route and status code', [
      'method',
      'route',
      'status',
    ]);
    registerUpstreamMetrics(this.registry, this.upstream);
    this.routing = registerRoutingMetrics(this.registry, this.upstream, currency);
  }

  /** The series of one (operation, interface, outcome), resolved once. */
  private readonly lookupSeries = new Map<string, { lookups: CounterSlot; latency: { observe(v: number): void }; credits: CounterSlot | undefined; rollup: RollupSlot | undefined }>();

  onRateLimited(event: { window: string; interface: string }): void {
    this.rateLimited.inc({ window: event.window, interface: event.interface });
  }

  onFreeRowLost(event: { interface: string; reason: string }): void {
    this.freeRowsLost.inc({ interface: event.interface, reason: event.reason });
  }

  onDebitReversal(event: { interface: string; outcome: 'reversed' | 'failed' }): void {
    this.debitReversals.inc({ interface: event.interface, outcome: event.outcome });
  }

  onLookup(event: { operation: string; interface: string; outcome: string; seconds: number; charged: number }): void {
    const key = `${event.operation}\u0000${event.interface}\u0000${event.outcome}`;
    let series = this.lookupSeries.get(key);
    if (!series) {
      series = {
        lookups: this.lookups.slot({ operation: event.operation, interface: event.interface, outcome: event.outcome }),
        latency: this.latency.labels({ interface: event.interface, outcome: event.outcome === 'success' ? 'success' : 'error' }),
        credits: undefined,
        rollup: this.rollup?.slot(event.operation, event.interface, event.outcome),
      };
      this.lookupSeries.set(key, series);
    }
    series.lookups.pending += 1;
    if (series.rollup) this.rollup?.count(series.rollup);
    series.latency.observe(event.seconds);
    // The credits series of an operation and interface appears with its first charge, not before.
    if (event.charged > 0) {
      series.credits ??= this.credits.slot({ operation: event.operation, interface: event.interface });
      series.credits.pending += event.charged;
    }
  }

  /** The slot of each (method, route, status), by one string: no label object per response. */
  private readonly httpSlots = new Map<string, CounterSlot>();

  /** Counts one answered HTTP request (route: the matched route pattern, so the label set is bounded). */
  onHttpResponse(method: string, route: string, status: number): void {
    const key = `${status}\u0000${method}\u0000${route}`;
    let slot = this.httpSlots.get(key);
    if (slot === undefined) {
      slot = this.httpRequests.slot({ method, route, status: String(status) });
      this.httpSlots.set(key, slot);
    }
    slot.pending += 1;
  }
}
