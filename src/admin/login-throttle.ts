/**
 * Login throttling (issue 16): after too many failed logins for one user name or from one
 * address within the window, further attempts are refused until the window passes, whether the
 * password is right or not. Counted in this process: behind several instances an attacker gets
 * at most the limit per instance, still bounded; a success clears the user's count.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly now: () => number,
    private readonly perUser = 5,
    private readonly perAddress = 20,
    private readonly windowMs = 15 * 60_000,
  ) {}

  /** Seconds until another attempt is allowed, or 0 when it is allowed now. */
  retryAfter(user: string, address: string): number {
    const waits = [this.wait(`u:${user.toLowerCase()}`, this.perUser), this.wait(`a:${address}`, this.perAddress)];
    return Math.max(...waits);
  }

  fail(user: string, address: string): void {
    this.bump(`u:${user.toLowerCase()}`);
    this.bump(`a:${address}`);
  }

  succeed(user: string): void {
    this.failures.delete(`u:${user.toLowerCase()}`);
  }

  private wait(key: string, limit: number): number {
    const entry = this.failures.get(key);
    if (!entry) return 0;
    const left = entry.since + this.windowMs - this.now();
    if (left <= 0) {
      this.failures.delete(key);
      return 0;
    }
    return entry.count >= limit ? Math.ceil(left / 1000) : 0;
  }

  private bump(key: string): void {
    const now = this.now();
    const entry = this.failures.get(key);
    if (!entry || entry.since + this.windowMs <= now) {
      // Bounded: a flood of distinct names cannot grow the map without end.
      if (this.failures.size >= 100_000) this.failures.clear();
      this.failures.set(key, { count: 1, since: now });
    } else entry.count += 1;
  }
}

/**
 * A fixed-window request limit per caller for the admin and account APIs (per session, token or
 * address), in this process.
 */
export class RequestLimiter {
  private readonly counts = new Map<string, { count: number; window: number }>();

  constructor(
    private readonly now: () => number,
    private readonly perMinute: number,
  ) {}

  /** Seconds to wait, or 0 when the request may go ahead (and is counted). */
  take(caller: string): number {
    const now = this.now();
    const window = Math.floor(now / 60_000);
    const entry = this.counts.get(caller);
    if (!entry || entry.window !== window) {
      if (this.counts.size >= 100_000) this.counts.clear();
      this.counts.set(caller, { count: 1, window });
      return 0;
    }
    entry.count += 1;
    return entry.count > this.perMinute ? Math.ceil(((window + 1) * 60_000 - now) / 1000) : 0;
  }
}
