import { ALLOWED, refusal, windowsAt, type EffectiveLimits, type RateCounters, type RateDecision } from './rate-limiter.js';

interface AccountCounts {
  second: number;
  inSecond: number;
  day: number;
  inDay: number;
}

/** Accounts tracked at most; beyond that, entries of past days are dropped first. */
const MAX_ACCOUNTS = 100_000;

/**
 * Request counts in this process: the counters without Redis, and the fallback while Redis is
 * unreachable. With several instances each counts only its own requests, so together they allow
 * up to (instances x limit).
 */
export class InProcessRateCounters implements RateCounters {
  private readonly counts = new Map<number | string, AccountCounts>();

  hit(accountId: number | string, limits: EffectiveLimits, now: Date): RateDecision {
    const windows = windowsAt(now);
    let counts = this.counts.get(accountId);
    if (!counts) {
      if (this.counts.size >= MAX_ACCOUNTS) this.prune(windows.day);
      counts = { second: windows.second, inSecond: 0, day: windows.day, inDay: 0 };
      this.counts.set(accountId, counts);
    }
    if (counts.second !== windows.second) {
      counts.second = windows.second;
      counts.inSecond = 0;
    }
    if (counts.day !== windows.day) {
      counts.day = windows.day;
      counts.inDay = 0;
    }
    if (limits.perSecond !== null && counts.inSecond >= limits.perSecond) return refusal('second', limits.perSecond, windows);
    if (limits.perDay !== null && counts.inDay >= limits.perDay) return refusal('day', limits.perDay, windows);
    // Only limited windows count, as in Redis (a limit set later starts from zero).
    if (limits.perSecond !== null) counts.inSecond += 1;
    if (limits.perDay !== null) counts.inDay += 1;
    return ALLOWED;
  }

  private prune(today: number): void {
    for (const [id, counts] of this.counts) if (counts.day !== today) this.counts.delete(id);
    if (this.counts.size >= MAX_ACCOUNTS) this.counts.clear();
  }
}
