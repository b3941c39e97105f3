import { ALLOWED, refusal, windowsAt, type EffectiveLimits, type RateCounters, type RateDecision } from '../rate-limit/rate-limiter.js';
import { OutageLog, RedisScript, type RedisConnection, type RedisLog } from './redis-connection.js';

/**
 * One request against both windows, atomically (a script runs alone on the server, so concurrent
 * instances cannot both take the last slot). Returns 0 (counted), 1 (refused by the second) or
 * 2 (refused by the day). A refused request counts in neither window: over the second it was never
 * added to the day; over the day its second is given back.
 *
 * KEYS: second counter, day counter. ARGV: per-second limit, per-day limit (0: no limit, not
 * counted), second key TTL ms, day key TTL ms.
 */
const HIT_SCRIPT = new RedisScript(`
local perSecond = tonumber(ARGV[1])
local perDay = tonumber(ARGV[2])
if perSecond > 0 then
  local n = redis.call('INCR', KEYS[1])
  if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
  if n > perSecond then return 1 end
end
if perDay > 0 then
  local n = redis.call('INCR', KEYS[2])
  if n == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
  if n > perDay then
    if perSecond > 0 then redis.call('DECR', KEYS[1]) end
    return 2
  end
end
return 0
`);

/**
 * Keys outlive their window by this much, so an instance whose clock is a little behind does not
 * find "its" window's counter gone and start it again from zero. Keep instance clocks in sync
 * (NTP): each instance names the window from its own clock.
 */
const SECOND_KEY_SLACK_MS = 5000;
const DAY_KEY_SLACK_MS = 3_600_000;

/** The counter keys of an account (or `anon:<address>`): `{prefix}rl:{<id>}:s:<epoch second>` and `...:d:<YYYY-MM-DD>`. */
export function rateLimitKeys(keyPrefix: string, accountId: number | string, now: Date): { second: string; day: string } {
  const { second } = windowsAt(now);
  // The braces are a Redis Cluster hash tag: both keys of the script land on the same node.
  const base = `${keyPrefix}rl:{${accountId}}`;
  return { second: `${base}:s:${second}`, day: `${base}:d:${now.toISOString().slice(0, 10)}` };
}

/**
 * Request counts in Redis, shared by every instance (issue 5). When Redis does not answer, the
 * request is counted by `fallback` (in this process) instead of being refused: paid traffic is
 * not turned away because a counter is out of reach. The outage is logged once.
 */
export class RedisRateCounters implements RateCounters {
  private readonly outage: OutageLog;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keyPrefix: string,
    private readonly fallback: RateCounters,
    log: RedisLog,
    /** Told each time a request was counted in-process because Redis did not answer. */
    private readonly onFallback: () => void = () => undefined,
  ) {
    this.outage = new OutageLog(log, 'Shared rate-limit counters in Redis', 'rate limits are counted per instance');
  }

  async hit(accountId: number | string, limits: EffectiveLimits, now: Date): Promise<RateDecision> {
    const client = this.connection.commands;
    if (client.status !== 'ready') return this.fallBack(accountId, limits, now, new Error(`Redis connection is ${client.status}`));
    const windows = windowsAt(now);
    const keys = rateLimitKeys(this.keyPrefix, accountId, now);
    const args = [limits.perSecond ?? 0, limits.perDay ?? 0, windows.secondEndsInMs + SECOND_KEY_SLACK_MS, windows.dayEndsInMs + DAY_KEY_SLACK_MS];
    let outcome: unknown;
    try {
      outcome = await HIT_SCRIPT.run(client, [keys.second, keys.day], args);
    } catch (error) {
      return this.fallBack(accountId, limits, now, error);
    }
    this.outage.succeeded();
    if (outcome === 1 && limits.perSecond !== null) return refusal('second', limits.perSecond, windows);
    if (outcome === 2 && limits.perDay !== null) return refusal('day', limits.perDay, windows);
    return ALLOWED;
  }

  private fallBack(accountId: number | string, limits: EffectiveLimits, now: Date, error: unknown): RateDecision | Promise<RateDecision> {
    this.outage.failed(error);
    this.onFallback();
    return this.fallback.hit(accountId, limits, now);
  }
}
