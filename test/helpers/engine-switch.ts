/**
 * The one switch for the servers a test run uses (docs/testing.md), read by test/helpers/engines.ts
 * and test/redis/redis-harness.ts: `TEST_ENGINES=sqlite` (set by `npm run test:fast`) runs every
 * storage suite on SQLite only and skips the suites that need PostgreSQL or Redis, quietly;
 * unset or `all` (`npm test`, CI) runs both engines and Redis. Any other value stops the run.
 */
export type EngineSwitch = 'all' | 'sqlite';

export const ENGINE_SWITCH_VARIABLE = 'TEST_ENGINES';

export function engineSwitchOf(env: Readonly<Record<string, string | undefined>>): EngineSwitch {
  const value = env[ENGINE_SWITCH_VARIABLE]?.trim().toLowerCase() ?? '';
  if (value === '' || value === 'all') return 'all';
  if (value === 'sqlite') return 'sqlite';
  throw new Error(`${ENGINE_SWITCH_VARIABLE} must be "sqlite" or "all" (got "${env[ENGINE_SWITCH_VARIABLE] ?? ''}"): see docs/testing.md`);
}
