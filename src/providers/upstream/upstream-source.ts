import type { SharedCache } from '../../redis/shared-cache.js';
import type { Clock } from '../../shared/clock.js';
import { realWaitClock, type WaitClock } from '../../shared/wait-clock.js';
import type { ProviderAnswer } from '../../lookup/provider.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { UpstreamHttpClient } from './http-client.js';
import { SecretRedactor } from './secret-redactor.js';
import { takeTurn, type FlightTurn } from './shared-flight.js';
import type { CachedAnswer, UpstreamCacheRepository } from './upstream-cache.repository.js';
import { UpstreamError } from './upstream-error.js';
import type { UpstreamMonitor } from './upstream-monitor.js';
import type { UpstreamSettings } from '../../config/upstream-settings.js';

/** Shared by every upstream source of an app. */
export interface UpstreamContext {
  readonly cache: UpstreamCacheRepository;
  readonly clock: Clock;
  readonly monitor: UpstreamMonitor;
  /**
   * The cache every instance shares through Redis (REDIS_URL), read before the database table and
   * written with it, and the lock of each key's single flight across instances (shared-flight.ts).
   * It never throws and misses while Redis is down, so the table stays the authority.
   */
  readonly shared?: SharedCache | undefined;
  /** The HTTP clients' request budgets and retry pauses (`UpstreamHttpOptions.wait`); real time when absent. */
  readonly waitClock?: WaitClock | undefined;
  /**
   * The router's gate of a paid provider (UpstreamPolicy.gate, src/providers/routing/): asked
   * after a cache miss, as LookupOptions.refuse is, for every source by its name, so an adapter
   * need not pass it. A reason means the provider is out (funds, quota, budget, refused key) on
   * every instance; undefined lets the call go ahead.
   */
  readonly gate?: ((provider: string) => string | undefined | Promise<string | undefined>) | undefined;
}

/** What the shared cache holds for one answer; anything else read back is ignored as a miss. */
function isCachedAnswer(value: unknown): value is CachedAnswer {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { status?: unknown; fetchedAt?: unknown };
  return ((v.status === 'found' && 'payload' in v) || v.status === 'not-found') && typeof v.fetchedAt === 'string';
}

/** What an adapter's fetch function concluded from the upstream's answer. */
export type FetchOutcome =
  | {
      readonly status: 'found';
      readonly payload: unknown;
      /**
       * A paid provider's own price signal for this call, in the operator's currency
       * (UPSTREAM_CURRENCY): UKVD's TransactionCost, Vincario's price per service. It wins over the
       * configured `<NAME>_PRICE` where it is sent. Absent for free registers.
       */
      readonly cost?: number;
      /**
       * The currency `cost` is in, where the provider names it (Vincario's `price_currency`): a
       * cost in another currency than UPSTREAM_CURRENCY is not used (UpstreamPolicy), since
       * prices, budgets and spend are never converted.
       */
      readonly costCurrency?: string;
      /** A paid provider's balance after this call, where it says (UKVD's AccountBalance, Vincario's balance). */
      readonly balance?: number;
    }
  /** `cache: false` for answers that may be our fault (a 400), so a fix shows at once. */
  | { readonly status: 'not-found'; readonly cache?: boolean };

/** The answer of `UpstreamSource.lookup`. `payload` is the JSON the fetch function returned. */
export type UpstreamAnswer =
  | { readonly status: 'found'; readonly payload: unknown; readonly via: 'upstream' | 'cache' }
  | { readonly status: 'not-found'; readonly via: 'upstream' | 'cache' }
  | { readonly status: 'unavailable'; readonly reason: string };

/**
 * A found upstream answer as the pipeline's ProviderAnswer: `via` says whether a call or the
 * shared cache gave it (the ledger's and X-Lookup-Source's `cache`). Adapters build their found
 * answers with it.
 */
export function foundAs(answer: Extract<UpstreamAnswer, { readonly status: 'found' }>, record: unknown, source: string): ProviderAnswer {
  return { status: 'found', record, source, via: answer.via };
}

/** A not-found or unavailable upstream answer, as the pipeline's ProviderAnswer (neither costs a credit). */
export function unansweredAs(answer: Exclude<UpstreamAnswer, { readonly status: 'found' }>): ProviderAnswer {
  return answer.status === 'not-found' ? { status: 'not-found' } : { status: 'unavailable', reason: answer.reason };
}

/** Per-lookup options of `UpstreamSource.lookup`. */
export interface LookupOptions {
  /**
   * Asked after a cache miss, before the breaker: a reason not to ask the upstream now (an
   * operator's gate, such as no balance left there), or undefined to go ahead. A refusal is
   * `unavailable` (free) and does not count against the breaker. It may answer a promise (a gate
   * whose state other instances share, read from the store).
   */
  readonly refuse?: () => string | undefined | Promise<string | undefined>;
  /**
   * The operation asked, for sources that answer several: the upstream spend counts calls and
   * cache answers by it (upstream-spend.ts). Sources that answer one kind of question leave it out.
   */
  readonly operation?: string;
}

/** Expired cache rows of a provider are deleted at most this often. */
const PURGE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * One upstream, with everything issue 4 asks of every upstream: the answer cache in the store
 * (found for `cacheTtlS`, not-found for `notFoundTtlS`), a circuit breaker, an HTTP client with
 * timeout, retry and Retry-After handling, a redactor for the upstream's secrets, and reports to
 * the monitor (metrics, /readyz, logs).
 *
 * An adapter supplies only the request and the meaning of the answer:
 * ```ts
 * const source = new UpstreamSource(settings, context, [apiKey]);
 * const answer = await source.lookup(vrm, async () => {
 *   const res = await source.http.request({ method: 'GET', url: `${settings.baseUrl}/x/${vrm}`, headers: { 'x-api-key': apiKey } });
 *   if (res.status === 404) return { status: 'not-found' };
 *   if (res.status !== 200) throw new UpstreamError('unexpected-status', `HTTP ${res.status}`, res.status);
 *   return { status: 'found', payload: JSON.parse(res.text) };
 * });
 * ```
 * The fetch function throws UpstreamError for anything that is not an answer; every throw makes
 * the lookup `unavailable` and counts against the breaker. Found and not-found count as successes.
 * Concurrent lookups of one key share one fetch: in one process through `inflight`, and across
 * instances sharing Redis through a lock per key (shared-flight.ts): one instance asks, the others
 * are served its answer from the shared cache (`via: 'cache'`, which costs no upstream spend). A
 * provider whose found answers are never kept (`cacheTtlS` 0) takes no part: it is asked every time.
 */
export class UpstreamSource {
  readonly http: UpstreamHttpClient;
  readonly redactor: SecretRedactor;
  private readonly breaker: CircuitBreaker;
  private readonly inflight = new Map<string, Promise<UpstreamAnswer>>();
  private lastPurge = 0;

  constructor(
    readonly settings: UpstreamSettings,
    private readonly context: UpstreamContext,
    /** The upstream's secrets (keys, client secrets), hidden from every message it produces. */
    secrets: readonly (string | undefined)[] = [],
  ) {
    const { monitor, clock, waitClock } = context;
    this.redactor = new SecretRedactor(secrets);
    this.breaker = new CircuitBreaker({
      failureThreshold: settings.breakerFailures,
      openMs: settings.breakerOpenMs,
      clock,
      onStateChange: (from, to) => {
        monitor.emit({ type: 'breaker', provider: settings.name, from, to });
      },
    });
    this.http = new UpstreamHttpClient({ provider: settings.name, timeoutMs: settings.timeoutMs, budgetMs: settings.budgetMs, monitor, clock, ...(waitClock ? { wait: waitClock } : {}) });
    monitor.register(settings.name, this.breaker);
  }

  get name(): string {
    return this.settings.name;
  }

  /** The cached answer for `key`, else `fetch()` behind the breaker; never throws. */
  lookup(key: string, fetch: () => Promise<FetchOutcome>, options: LookupOptions = {}): Promise<UpstreamAnswer> {
    const running = this.inflight.get(key);
    if (running) return running;
    const started = this.run(key, fetch, options).finally(() => {
      this.inflight.delete(key);
    });
    this.inflight.set(key, started);
    return started;
  }

  private async run(key: string, fetch: () => Promise<FetchOutcome>, options: LookupOptions): Promise<UpstreamAnswer> {
    const { monitor } = this.context;
    const provider = this.settings.name;
    const op = options.operation === undefined ? {} : { operation: options.operation };
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;

    const fromCache = (cached: CachedAnswer): UpstreamAnswer => {
      monitor.emit({ type: 'answer', provider, answer: cached.status, via: 'cache', seconds: seconds(), ...op });
      return cached.status === 'found' ? { status: 'found', payload: cached.payload, via: 'cache' } : { status: 'not-found', via: 'cache' };
    };
    const cached = await this.readCache(key);
    if (cached) return fromCache(cached);

    const turn = await this.flight(key);
    if (turn.kind === 'answer') return fromCache(turn.answer);
    try {
      return await this.ask(key, fetch, options, seconds);
    } finally {
      // After the answer is stored (ask awaits writeCache), or at once when there is none: the next
      // waiting instance then takes the lock and asks itself.
      if (turn.kind === 'lead') await turn.release();
    }
  }

  /** The gate, the breaker and the call, for a lookup no cache answered; never throws. */
  private async ask(key: string, fetch: () => Promise<FetchOutcome>, options: LookupOptions, seconds: () => number): Promise<UpstreamAnswer> {
    const { monitor } = this.context;
    const provider = this.settings.name;
    const op = options.operation === undefined ? {} : { operation: options.operation };
    const own = options.refuse?.();
    const gate = (own instanceof Promise ? await own : own) ?? this.context.gate?.(provider);
    const refused = gate instanceof Promise ? await gate : gate;
    if (refused !== undefined) {
      monitor.emit({ type: 'answer', provider, answer: 'unavailable', via: 'refused', seconds: seconds(), failure: { kind: 'refused', message: refused }, ...op });
      return { status: 'unavailable', reason: `${provider}: ${refused}` };
    }

    if (!this.breaker.tryAcquire()) {
      const message = 'circuit open after repeated failures; not asking the upstream';
      monitor.emit({ type: 'answer', provider, answer: 'unavailable', via: 'circuit-open', seconds: seconds(), failure: { kind: 'circuit-open', message }, ...op });
      return { status: 'unavailable', reason: `${provider}: ${message}` };
    }

    let outcome: FetchOutcome;
    try {
      outcome = await fetch();
    } catch (error) {
      this.breaker.onFailure();
      const failure = error instanceof UpstreamError ? error : new UpstreamError('internal', this.redactor.redact(error instanceof Error ? `${error.name}: ${error.message}` : 'non-error thrown'));
      const message = this.redactor.redact(failure.message);
      monitor.emit({ type: 'answer', provider, answer: 'unavailable', via: 'upstream', seconds: seconds(), failure: { kind: failure.kind, message }, ...op });
      return { status: 'unavailable', reason: `${provider}: ${message}` };
    }
    this.breaker.onSuccess();

    if (outcome.status === 'found') await this.writeCache(key, { status: 'found', payload: outcome.payload }, this.settings.cacheTtlS);
    else if (outcome.cache !== false) await this.writeCache(key, { status: 'not-found' }, this.settings.notFoundTtlS);
    const signals =
      outcome.status === 'found'
        ? { ...(outcome.cost !== undefined ? { cost: outcome.cost } : {}), ...(outcome.costCurrency !== undefined ? { costCurrency: outcome.costCurrency } : {}), ...(outcome.balance !== undefined ? { balance: outcome.balance } : {}) }
        : {};
    monitor.emit({ type: 'answer', provider, answer: outcome.status, via: 'upstream', seconds: seconds(), ...op, ...signals });
    return outcome.status === 'found' ? { status: 'found', payload: outcome.payload, via: 'upstream' } : { status: 'not-found', via: 'upstream' };
  }

  /**
   * This instance's turn at a key no cache answered (shared-flight.ts): lead, be served another
   * instance's answer, or go alone. Only where answers are shared (Redis) and found answers are
   * kept: a follower is served from the cache, so with `cacheTtlS` 0 it would only ever wait.
   */
  private flight(key: string): Promise<FlightTurn<CachedAnswer>> {
    const shared = this.context.shared;
    if (!shared || this.settings.cacheTtlS <= 0) return Promise.resolve({ kind: 'alone' });
    const sharedKey = this.sharedKey(key);
    const leaseMs = Math.max(1, Math.ceil(this.settings.budgetMs));
    return takeTurn(shared, sharedKey, leaseMs, this.context.waitClock ?? realWaitClock, async () => {
      const value = await shared.get(sharedKey);
      return isCachedAnswer(value) ? value : undefined;
    });
  }

  private sharedKey(key: string): string {
    return `upstream:${this.settings.name}:${key}`;
  }

  /** A cache that cannot be read is a miss: the upstream still answers. */
  private async readCache(key: string): Promise<Awaited<ReturnType<UpstreamCacheRepository['get']>>> {
    if (this.settings.cacheTtlS <= 0 && this.settings.notFoundTtlS <= 0) return undefined;
    const sharedKey = this.sharedKey(key);
    const shared = await this.context.shared?.get(sharedKey);
    if (isCachedAnswer(shared)) return shared;
    try {
      const answer = await this.context.cache.get(this.settings.name, key, this.context.clock.now());
      // Warm the shared cache for the other instances, for what is left of the answer's life.
      if (answer && this.context.shared) {
        const ttl = answer.status === 'found' ? this.settings.cacheTtlS : this.settings.notFoundTtlS;
        const left = Math.floor(ttl - (this.context.clock.now().getTime() - Date.parse(answer.fetchedAt)) / 1000);
        if (left > 0) await this.context.shared.set(sharedKey, answer, left);
      }
      return answer;
    } catch (error) {
      this.cacheError('read', error);
      return undefined;
    }
  }

  /** A cache that cannot be written costs a later upstream call, not this answer. */
  private async writeCache(key: string, answer: { status: 'found'; payload: unknown } | { status: 'not-found' }, ttlS: number): Promise<void> {
    if (ttlS <= 0) return;
    const now = this.context.clock.now();
    await this.context.shared?.set(this.sharedKey(key), { ...answer, fetchedAt: now.toISOString() }, ttlS);
    try {
      await this.context.cache.put(this.settings.name, key, answer, ttlS, now);
      if (now.getTime() - this.lastPurge >= PURGE_INTERVAL_MS) {
        this.lastPurge = now.getTime();
        await this.context.cache.purgeExpired(now, this.settings.name);
      }
    } catch (error) {
      this.cacheError('write', error);
    }
  }

  private cacheError(operation: 'read' | 'write', error: unknown): void {
    const message = this.redactor.redact(error instanceof Error ? error.message : 'unknown error');
    this.context.monitor.emit({ type: 'cache-error', provider: this.settings.name, operation, message });
  }
}
