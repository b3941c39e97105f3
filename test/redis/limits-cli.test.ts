import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, json } from '../cli/cli-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

describe('vehicle-lookup accounts limits', () => {
  let t: TestApp;
  let env: Record<string, string>;

  beforeEach(async () => {
    t = await createTestApp();
    env = { DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' };
    await t.account('acme', 10);
  });
  afterEach(async () => t.close());

  it('shows no limits for a new account, and says counters are per instance without REDIS_URL', async () => {
    const run = await cli(env, ['accounts', 'limits', 'acme']);
    expect(run.code).toBe(0);
    expect(run.out).toBe(
      ['Rate limits of acme:', '  per second:  none', '  per UTC day: none', 'Counted by each instance on its own (REDIS_URL is not set).'].join('\n'),
    );
    expect(json(await cli(env, ['accounts', 'limits', 'acme', '--json']))).toEqual({
      username: 'acme',
      account: { perSecond: null, perDay: null },
      effective: { perSecond: null, perDay: null },
    });
  });

  it('sets one limit and keeps the other, stored on the account', async () => {
    expect((await cli(env, ['accounts', 'limits', 'acme', '--per-day', '500'])).code).toBe(0);
    const run = await cli(env, ['accounts', 'limits', 'acme', '--per-second', '1', '--json']);
    expect(json(run)).toEqual({ username: 'acme', account: { perSecond: 1, perDay: 500 }, effective: { perSecond: 1, perDay: 500 } });
    expect((await t.services.accounts.show('acme')).rateLimits).toEqual({ perSecond: 1, perDay: 500 });
  });

  it('shows server defaults as such, exempts with --off and follows the defaults again with --default', async () => {
    const withDefaults = { ...env, RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_PER_DAY: '1000' };
    expect((await cli(withDefaults, ['accounts', 'limits', 'acme'])).out).toContain('  per second:  5 (server default RATE_LIMIT_PER_SECOND)');

    const off = await cli(withDefaults, ['accounts', 'limits', 'acme', '--off']);
    expect(off.out).toContain('Rate limits of acme (updated):');
    expect(off.out).toContain('  per second:  none (exempt from the server default RATE_LIMIT_PER_SECOND=5)');
    expect(json(await cli(withDefaults, ['accounts', 'limits', 'acme', '--json']))).toMatchObject({
      account: { perSecond: 0, perDay: 0 },
      effective: { perSecond: null, perDay: null },
    });

    expect(json(await cli(withDefaults, ['accounts', 'limits', 'acme', '--default', '--json']))).toMatchObject({
      account: { perSecond: null, perDay: null },
      effective: { perSecond: 5, perDay: 1000 },
    });
  });

  it('refuses conflicting options, numbers that are not whole or too large, and unknown accounts (exit 1), changing nothing', async () => {
    for (const args of [
      ['--off', '--per-second', '3'],
      ['--off', '--default'],
      ['--per-second', 'ten'],
      ['--per-second', '-1'],
      ['--per-day', '1000000001'],
    ]) {
      const run = await cli(env, ['accounts', 'limits', 'acme', ...args]);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.err, args.join(' ')).toMatch(/^vehicle-lookup: /);
    }
    expect((await t.services.accounts.show('acme')).rateLimits).toEqual({ perSecond: null, perDay: null });
    const unknown = await cli(env, ['accounts', 'limits', 'nobody', '--per-second', '1']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toBe('vehicle-lookup: no account named nobody');
  });

  it('rejects invalid RATE_LIMIT_* and REDIS_* settings at start-up', async () => {
    for (const [name, value] of [
      ['RATE_LIMIT_PER_SECOND', '0'],
      ['RATE_LIMIT_PER_DAY', '1.5'],
      ['REDIS_URL', 'http://127.0.0.1:6379'],
      ['REDIS_KEY_PREFIX', 'has space'],
    ] as const) {
      const run = await cli({ ...env, [name]: value }, ['accounts', 'limits', 'acme']);
      expect(run.code, name).toBe(1);
      expect(run.err, name).toContain(name);
    }
  });
});
