import type { Account, AccountRateLimits } from '../accounts/account.js';
import type { Clock } from '../shared/clock.js';
import type { MaybePromise } from '../shared/maybe-promise.js';

/** Server-wide limits for accounts that have none of their own (null: no limit). */
export interface RateLimitDefaults {
  readonly perSecond: number | null;
  readonly perDay: number | null;
}

export const NO_DEFAULT_LIMITS: RateLimitDefaults = Object.freeze({ perSecond: null, perDay: null });

/** The limits that apply to one request: a positive number, or null for no limit. */
export interface EffectiveLimits {
  readonly perSecond: number | null;
  readonly perDay: number | null;
}

/** The two fixed windows: `second` (one wall-clock second) and `day` (one UTC calendar day). */
export type RateWindow = 'second' | 'day';

export type RateDecision =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      readonly window: RateWindow;
      readonly limit: number;
      /** Whole seconds until the window that refused ends (at least 1): the Retry-After value. */
      readonly retryAfterSeconds: number;
    };

export const ALLOWED: RateDecision = Object.freeze({ allowed: true });

/**
 * Where request counts live: in this process (InProcessRateCounters) or in Redis, shared by every
 * instance (src/redis/redis-rate-counters.ts).
 *
 * Semantics, the same for both: fixed windows. A request counts in the current second and the
 * current UTC day; it is refused when the second already holds `perSecond` requests, or the day
 * `perDay`. A refused request counts in neither window, so a burst beyond the per-second limit does
 * not eat the day's quota. A fixed window allows up to twice the per-second limit across a second
 * boundary (N at the end of one second, N at the start of the next); that is the documented price
 * of one counter per window.
 */
export interface RateCounters {
  /**
   * Counts one request of the subject if its limits allow it. `limits` has at least one limit. The
   * subject is an account id, or `anon:<address>` for an anonymous caller (RateLimiter.checkAnonymous).
   */
  hit(subject: number | string, limits: EffectiveLimits, now: Date): MaybePromise<RateDecision>;
}

const DAY_MS = 86_400_000;

/** The windows a moment falls in, and how long each has left. */
export interface Windows {
  /** Seconds since the epoch. */
  readonly second: number;
  /** Days since the epoch (UTC). */
  readonly day: number;
  readonly secondEndsInMs: number;
  readonly dayEndsInMs: number;
}

export function windowsAt(now: Date): Windows {
  const ms = now.getTime();
  const second = Math.floor(ms / 1000);
  const day = Math.floor(ms / DAY_MS);
  return { second, day, secondEndsInMs: (second + 1) * 1000 - ms, dayEndsInMs: (day + 1) * DAY_MS - ms };
}

/** A refusal for `window`, with Retry-After rounded up to whole seconds. */
export function refusal(window: RateWindow, limit: number, windows: Windows): RateDecision {
  const endsInMs = window === 'second' ? windows.secondEndsInMs : windows.dayEndsInMs;
  return { allowed: false, window, limit, retryAfterSeconds: Math.max(1, Math.ceil(endsInMs / 1000)) };
}

/** The account's limits after applying the server defaults: null and 0 both end up "no limit". */
export function effectiveLimits(own: AccountRateLimits, defaults: RateLimitDefaults): EffectiveLimits {
  return { perSecond: pickLimit(own.perSecond, defaults.perSecond), perDay: pickLimit(own.perDay, defaults.perDay) };
}

/** The account's own limit, else the default; zero or less means none. */
function pickLimit(mine: number | null, fallback: number | null): number | null {
  const value = mine ?? fallback;
  return value === null || value <= 0 ? null : value;
}

/**
 * Per-account rate limits (issue 5), checked by the lookup pipeline right after authentication.
 * Accounts without limits (the default) cost nothing here: no counter is touched.
 */
export class RateLimiter {
  constructor(
    private readonly counters: RateCounters,
    /** Names the windows; tests move it by hand. */
    private readonly clock: Clock,
    private readonly defaults: RateLimitDefaults = NO_DEFAULT_LIMITS,
  ) {}

  /**
   * Counts one request of the account. A plain value, no promise, when it has no limits (the
   * default, so the lookup path awaits nothing here) or when the counters are in this process.
   */
  check(account: Pick<Account, 'id' | 'rateLimits'>): MaybePromise<RateDecision> {
    const limits = effectiveLimits(account.rateLimits, this.defaults);
    if (limits.perSecond === null && limits.perDay === null) return ALLOWED;
    return this.counters.hit(account.id, limits, this.clock.now());
  }

  /**
   * Counts one request of an API key with its own limits (issue 33), in the same counters as the
   * accounts' (Redis when configured: shared by every instance), under the key's own subject. The
   * account's limits are checked first; the key's apply inside them.
   */
  checkKey(keyId: number, limits: EffectiveLimits): MaybePromise<RateDecision> {
    if (limits.perSecond === null && limits.perDay === null) return ALLOWED;
    return this.counters.hit(`key:${keyId}`, limits, this.clock.now());
  }

  /**
   * Counts one anonymous request from a client address (an operation the operator opened to
   * anonymous callers: ANONYMOUS_OPERATIONS), in the same counters as the accounts' (Redis when
   * configured), under its own subject so it never shares an account's count.
   */
  checkAnonymous(address: string, limits: EffectiveLimits): MaybePromise<RateDecision> {
    if (limits.perSecond === null && limits.perDay === null) return ALLOWED;
    return this.counters.hit(`anon:${address}`, limits, this.clock.now());
  }
}
