import type { BreakerState } from './circuit-breaker.js';

/**
 * What happens inside the upstream layer, as events. Metrics (src/ops/metrics.ts) and logs
 * (upstream-log.ts) are two listeners. Events carry provider names, status codes, error kinds and
 * durations: never URLs, headers, bodies, keys or tokens.
 */
export type UpstreamEvent =
  /** One HTTP attempt finished. `outcome` is the status code ("200", "503") or "timeout" / "network". */
  | { readonly type: 'request'; readonly provider: string; readonly endpoint: string; readonly outcome: string; readonly seconds: number; readonly attempt: number }
  /** An attempt failed and is retried (`reason`: "timeout", "network", "5xx" or "429"). */
  | { readonly type: 'retry'; readonly provider: string; readonly endpoint: string; readonly reason: string; readonly waitMs: number }
  /** A lookup finished: where the answer came from, and why it failed if it did. */
  | {
      readonly type: 'answer';
      readonly provider: string;
      readonly answer: 'found' | 'not-found' | 'unavailable';
      /** `refused`: a gate of the provider said not to ask (LookupOptions.refuse). */
      readonly via: 'upstream' | 'cache' | 'circuit-open' | 'refused';
      readonly seconds: number;
      /**
       * The operation asked, where the source says (`UpstreamSource.lookup`'s `operation`): the
       * upstream spend counts calls and cache answers by it (upstream-spend.ts).
       */
      readonly operation?: string;
      readonly failure?: { readonly kind: string; readonly message: string };
      /** A paid provider's own price for this call, where its answer said (FetchOutcome.cost). */
      readonly cost?: number;
      /** The currency of `cost`, where the provider names it (FetchOutcome.costCurrency). */
      readonly costCurrency?: string;
      /** A paid provider's balance after this call, where its answer said (FetchOutcome.balance). */
      readonly balance?: number;
    }
  | { readonly type: 'breaker'; readonly provider: string; readonly from: BreakerState; readonly to: BreakerState }
  /** An OAuth token was obtained or could not be. */
  | { readonly type: 'token'; readonly provider: string; readonly outcome: 'issued' | 'failed'; readonly expiresInS?: number; readonly message?: string }
  /**
   * The operator's balance at an upstream that has one (upstream-balance.ts): `read` from the
   * upstream, or `counted` down by one after an answer it charges for, until the next read.
   * `shared` when taken from the store, where another instance read or counted it
   * (UpstreamBalanceWatch.refresh); `error` when a read failed (the last balance stands).
   */
  | { readonly type: 'balance'; readonly provider: string; readonly credits?: number; readonly how: 'read' | 'counted' | 'shared' | 'error'; readonly message?: string }
  /** The answer cache could not be read or written; the lookup went on without it. */
  | { readonly type: 'cache-error'; readonly provider: string; readonly operation: 'read' | 'write'; readonly message: string }
  /**
   * A paid upstream's answer cost the operator `amount` (in UPSTREAM_CURRENCY, exact to a
   * millionth): told by its routing policy once that amount is added to the spend in the store
   * (UpstreamPolicy), so the spend metric counts exactly what the store holds.
   */
  | { readonly type: 'spend'; readonly provider: string; readonly amount: number };

/** Something told about upstream events. */
export type UpstreamListener = (event: UpstreamEvent) => void;

/** One provider's state as /readyz shows it. */
export interface ProviderStatus {
  readonly enabled: boolean;
  /** up: circuit closed; down: open; probing: half-open; disabled: not configured. */
  readonly status: 'up' | 'down' | 'probing' | 'disabled';
  /** Why a provider is disabled (which variable is missing). */
  readonly reason?: string;
  readonly breaker?: BreakerState;
  /** When an open circuit lets the next trial call through (ISO time). */
  readonly retryAt?: string;
  readonly consecutiveFailures?: number;
  /** Lookups answered, by where the answer came from, and lookups that failed. */
  readonly lookups?: { readonly upstream: number; readonly cache: number; readonly unavailable: number };
  /** HTTP attempts made, and how many of them failed (timeout, network, 5xx, 429). */
  readonly requests?: { readonly total: number; readonly failed: number };
  /** Duration of the last HTTP attempt. */
  readonly lastLatencyMs?: number;
  readonly lastSuccessAt?: string;
  readonly lastFailure?: { readonly at: string; readonly kind: string; readonly message: string };
  /** The operator's balance there, for an upstream that has one (upstream-balance.ts). */
  readonly balance?: UpstreamBalanceStatus;
}

/** The operator's balance at an upstream, as this instance last knew it. */
export interface UpstreamBalanceStatus {
  /** Credits left; null until the first read answered. */
  readonly credits: number | null;
  /** When the upstream last told it (ISO time); later answers it charged for counted it down. */
  readonly readAt: string | null;
  /** The last read that failed, if the last read failed. */
  readonly lastError?: { readonly at: string; readonly message: string };
}

/** What the monitor reads from a provider's breaker. */
export interface BreakerView {
  readonly state: BreakerState;
  readonly consecutiveFailures: number;
  readonly retryAt: number | undefined;
}

interface Tracked {
  breaker?: BreakerView;
  disabledReason?: string;
  lookups: { upstream: number; cache: number; unavailable: number };
  requests: { total: number; failed: number };
  lastLatencyMs?: number;
  lastSuccessAt?: string;
  lastFailure?: { at: string; kind: string; message: string };
  balance?: { credits: number | null; readAt: string | null; lastError?: { at: string; message: string } };
}

const FAILED_OUTCOME = /^(5\d\d|429|timeout|network)$/;

/**
 * The upstream providers of one app: their live state (for /readyz) and an event stream (for
 * metrics and logs). The app's Metrics owns one (`metrics.upstream`); providers report to it.
 */
export class UpstreamMonitor {
  private readonly providers = new Map<string, Tracked>();
  private readonly listeners: UpstreamListener[] = [];

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** Registers an enabled provider and the breaker whose state /readyz reports. */
  register(provider: string, breaker: BreakerView): void {
    this.track(provider).breaker = breaker;
  }

  /** Records that a provider is not configured, and why ("DVLA_API_KEY is not set"). */
  disabled(provider: string, reason: string): void {
    this.track(provider).disabledReason = reason;
  }

  subscribe(listener: UpstreamListener): void {
    this.listeners.push(listener);
  }

  /** Reports an event: updates the provider's state, then tells every listener. */
  emit(event: UpstreamEvent): void {
    const t = this.track(event.provider);
    const at = this.now().toISOString();
    switch (event.type) {
      case 'request':
        t.requests.total += 1;
        if (FAILED_OUTCOME.test(event.outcome)) t.requests.failed += 1;
        t.lastLatencyMs = Math.round(event.seconds * 1000);
        break;
      case 'answer':
        if (event.answer === 'unavailable') {
          t.lookups.unavailable += 1;
          // A refusal by the open circuit (or a gate) is not news: keep the failure that opened it.
          if (event.failure && event.via === 'upstream') t.lastFailure = { at, kind: event.failure.kind, message: event.failure.message };
        } else {
          t.lookups[event.via === 'cache' ? 'cache' : 'upstream'] += 1;
          if (event.via === 'upstream') t.lastSuccessAt = at;
        }
        break;
      case 'balance': {
        const balance = (t.balance ??= { credits: null, readAt: null });
        if (event.how === 'error') balance.lastError = { at, message: event.message ?? 'unknown error' };
        else if (event.credits !== undefined) {
          balance.credits = event.credits;
          if (event.how === 'read') {
            balance.readAt = at;
            delete balance.lastError;
          }
        }
        break;
      }
      // Nothing in a provider's state counts these: the breaker keeps its own state, the rest is logged.
      case 'retry':
      case 'breaker':
      case 'token':
      case 'cache-error':
      case 'spend':
        break;
    }
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A broken listener (a logger, a metric) must not fail a lookup.
      }
    }
  }

  /** Every provider's state, by name: enabled ones and the ones left unconfigured. */
  snapshot(): Record<string, ProviderStatus> {
    const out: Record<string, ProviderStatus> = {};
    for (const [name, t] of [...this.providers].sort(([a], [b]) => a.localeCompare(b))) {
      if (!t.breaker) {
        if (t.disabledReason !== undefined) out[name] = { enabled: false, status: 'disabled', reason: t.disabledReason };
        continue;
      }
      const breaker = t.breaker.state;
      const retryAt = t.breaker.retryAt;
      out[name] = {
        enabled: true,
        status: breaker === 'closed' ? 'up' : breaker === 'open' ? 'down' : 'probing',
        breaker,
        ...(retryAt !== undefined ? { retryAt: new Date(retryAt).toISOString() } : {}),
        consecutiveFailures: t.breaker.consecutiveFailures,
        lookups: { ...t.lookups },
        requests: { ...t.requests },
        ...(t.lastLatencyMs !== undefined ? { lastLatencyMs: t.lastLatencyMs } : {}),
        ...(t.lastSuccessAt !== undefined ? { lastSuccessAt: t.lastSuccessAt } : {}),
        ...(t.lastFailure ? { lastFailure: { ...t.lastFailure } } : {}),
        ...(t.balance ? { balance: { credits: t.balance.credits, readAt: t.balance.readAt, ...(t.balance.lastError ? { lastError: { ...t.balance.lastError } } : {}) } } : {}),
      };
    }
    return out;
  }

  /** The breaker state of each enabled provider (for the circuit-state gauge). */
  breakerStates(): Array<{ provider: string; state: BreakerState }> {
    const out: Array<{ provider: string; state: BreakerState }> = [];
    for (const [provider, t] of this.providers) if (t.breaker) out.push({ provider, state: t.breaker.state });
    return out;
  }

  /** The known balance of each upstream that has one (for the balance gauge). */
  balances(): Array<{ provider: string; credits: number }> {
    const out: Array<{ provider: string; credits: number }> = [];
    for (const [provider, t] of this.providers) if (t.balance?.credits != null) out.push({ provider, credits: t.balance.credits });
    return out;
  }

  private track(provider: string): Tracked {
    let t = this.providers.get(provider);
    if (!t) {
      t = { lookups: { upstream: 0, cache: 0, unavailable: 0 }, requests: { total: 0, failed: 0 } };
      this.providers.set(provider, t);
    }
    return t;
  }
}

/**
 * The monitor an app's lookup observer carries. buildApp hands its Metrics to the services as
 * their LookupObserver, and Metrics owns the app's UpstreamMonitor, so the providers report to the
 * same monitor that /metrics and /readyz read. Anything else (the CLI passes no observer) gives
 * undefined, and the providers get a monitor of their own.
 */
export function monitorOf(observer: object | undefined): UpstreamMonitor | undefined {
  return observer !== undefined && 'upstream' in observer && observer.upstream instanceof UpstreamMonitor ? observer.upstream : undefined;
}
