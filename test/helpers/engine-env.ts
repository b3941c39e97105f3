import { REDIS_TEST_URL, redisAvailable, uniquePrefix } from '../redis/redis-harness.js';
import type { TestEngine } from './engines.js';

/**
 * The environment of a suite's app on `engine` (issue 28): on PostgreSQL the app also shares
 * Redis (when it answers) under a key prefix of its own, as a cluster of instances would run, so
 * the admin, account and console suites run once as a single SQLite process and once as a
 * PostgreSQL + Redis deployment. Pass the result to createTestApp with the engine.
 */
export async function engineEnv(engine: TestEngine, env: Record<string, string> = {}): Promise<Record<string, string>> {
  if (engine !== 'postgres' || !(await redisAvailable())) return env;
  return { REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: uniquePrefix(), ...env };
}
