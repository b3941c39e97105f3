import type { Clock } from '../../shared/clock.js';

/** closed: calls go through; open: calls are refused; half-open: one trial call is let through. */
export type BreakerState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive failed calls that open the circuit (>= 1). */
  readonly failureThreshold: number;
  /** How long the circuit stays open before one trial call is allowed, in milliseconds. */
  readonly openMs: number;
  /** Time source; tests pass a clock they move by hand. */
  readonly clock: Clock;
  /** Told about every state change (for logs and metrics). */
  readonly onStateChange?: (from: BreakerState, to: BreakerState) => void;
}

/**
 * A circuit breaker for one upstream, in memory (each instance of the service has its own; they
 * share the answer cache, not the breaker). After `failureThreshold` consecutive failures it opens
 * and refuses calls at once, so a dead upstream costs callers no timeouts and the upstream gets no
 * load; after `openMs` it lets a single trial call through (half-open): success closes it, failure
 * opens it for another `openMs`.
 *
 * Use: `if (!breaker.tryAcquire()) -> unavailable`; then exactly one of `onSuccess()` or
 * `onFailure()` per acquired call.
 */
export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private trialInFlight = false;

  constructor(private readonly options: CircuitBreakerOptions) {
    if (!Number.isInteger(options.failureThreshold) || options.failureThreshold < 1) throw new RangeError('failureThreshold must be a whole number >= 1');
    if (!(options.openMs >= 0)) throw new RangeError('openMs must be >= 0');
  }

  /** The state now; an open circuit whose wait is over reads as half-open. */
  get state(): BreakerState {
    if (this.current === 'open' && this.now() - this.openedAt >= this.options.openMs) this.moveTo('half-open');
    return this.current;
  }

  /** Consecutive failures since the last success. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** When the circuit may let a trial call through, while open (ms since the epoch). */
  get retryAt(): number | undefined {
    return this.current === 'open' ? this.openedAt + this.options.openMs : undefined;
  }

  /** True when a call may go ahead; in half-open state only one call at a time is let through. */
  tryAcquire(): boolean {
    switch (this.state) {
      case 'closed':
        return true;
      case 'open':
        return false;
      case 'half-open':
        if (this.trialInFlight) return false;
        this.trialInFlight = true;
        return true;
    }
  }

  /** The upstream answered (found or not found both count). */
  onSuccess(): void {
    this.failures = 0;
    this.trialInFlight = false;
    if (this.current !== 'closed') this.moveTo('closed');
  }

  /** The upstream failed (timeout, 5xx, refused credentials...). */
  onFailure(): void {
    this.failures += 1;
    const wasTrial = this.trialInFlight;
    this.trialInFlight = false;
    if (wasTrial || this.current === 'half-open' || (this.current === 'closed' && this.failures >= this.options.failureThreshold)) {
      this.openedAt = this.now();
      this.moveTo('open');
    }
  }

  private now(): number {
    return this.options.clock.now().getTime();
  }

  private moveTo(next: BreakerState): void {
    const from = this.current;
    if (from === next) {
      // Re-opened after a failed trial: the state did not change, the wait restarts (set above).
      return;
    }
    this.current = next;
    this.options.onStateChange?.(from, next);
  }
}
