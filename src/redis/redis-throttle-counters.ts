import type { ThrottleCounters, WindowCount } from '../users/login-throttle.js';
import { OutageLog, RedisScript, type RedisConnection, type RedisLog } from './redis-connection.js';

/**
 * One count, atomically: the key's first count sets its expiry to the window, so the window starts
 * with it and Redis ends it; a key without an expiry (written by hand) is given one. Answers
 * {count, milliseconds left}.
 *
 * KEYS: the counter. ARGV: window ms.
 */
const ADD_SCRIPT = new RedisScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {n, left}
`);

/** Takes one off a running count, never below zero (DECR keeps the expiry). */
const SUBTRACT_SCRIPT = new RedisScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 0
`);

/** The counter key of a throttle key (`login:u:<name>`, `login:a:<address>`, `req:<surface>:<hash>`). */
export function throttleKey(keyPrefix: string, key: string): string {
  return `${keyPrefix}th:${key}`;
}

/**
 * The login and request throttles' counts in Redis, shared by every instance (issue 16). When
 * Redis does not answer, the count is made in this process instead (`fallback`), as the lookup
 * rate limits do (RedisRateCounters): logins and API calls are not refused because a counter is out
 * of reach, and the limit holds per instance until Redis is back. The outage is logged once;
 * `onFallback` is told of every count made in-process.
 */
export class RedisThrottleCounters implements ThrottleCounters {
  private readonly outage: OutageLog;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keyPrefix: string,
    private readonly fallback: ThrottleCounters,
    log: RedisLog,
    private readonly onFallback: () => void = () => undefined,
  ) {
    this.outage = new OutageLog(log, 'Shared login and API request throttles in Redis', 'they are counted per instance');
  }

  async add(key: string, windowMs: number): Promise<WindowCount> {
    const answer = await this.command(ADD_SCRIPT, key, [windowMs]);
    if (answer === undefined) return this.fallback.add(key, windowMs);
    const [count, left] = Array.isArray(answer) ? (answer as unknown[]) : [];
    return { count: Number(count), endsInMs: Number(left) };
  }

  async subtract(key: string): Promise<void> {
    if ((await this.command(SUBTRACT_SCRIPT, key, [])) === undefined) await this.fallback.subtract(key);
  }

  async clear(key: string): Promise<void> {
    const client = this.connection.commands;
    try {
      if (client.status !== 'ready') throw new Error(`Redis connection is ${client.status}`);
      await client.del(throttleKey(this.keyPrefix, key));
      this.outage.succeeded();
    } catch (error) {
      this.failed(error);
    }
    // The fallback may hold a count from an outage: forget it too.
    await this.fallback.clear(key);
  }

  /** The script's answer, or undefined when Redis did not answer (the caller falls back). */
  private async command(script: RedisScript, key: string, args: readonly number[]): Promise<unknown> {
    const client = this.connection.commands;
    if (client.status !== 'ready') {
      this.failed(new Error(`Redis connection is ${client.status}`));
      return undefined;
    }
    try {
      const answer = await script.run(client, [throttleKey(this.keyPrefix, key)], args);
      this.outage.succeeded();
      return answer ?? 0;
    } catch (error) {
      this.failed(error);
      return undefined;
    }
  }

  private failed(error: unknown): void {
    this.outage.failed(error);
    this.onFallback();
  }
}
