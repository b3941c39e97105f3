import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AccountError } from '../../src/accounts/account.service.js';
import { hashApiKey } from '../../src/accounts/api-key.js';
import { KEY_USE_WRITE_INTERVAL_MS } from '../../src/accounts/key-usage-recorder.js';
import type { Clock } from '../../src/shared/clock.js';
import { storeAtMigration } from '../helpers/early-store.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const FRANCE = {
  operation: 'CheckFrance',
  key: { RegistrationNumber: 'EG258MA' },
  vehicle: { Description: 'Peugeot 208 Allure', RegistrationYear: '2019', CarMake: { CurrentTextValue: 'PEUGEOT' }, CarModel: { CurrentTextValue: '208' } },
};

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2026-11-25T12:00:00.000Z')): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => new Date(now), millis: () => now, advance: (ms) => { now += ms; } };
}

describe.each(ENGINES)('several API keys per account on %s', (engine) => {
  let t: TestApp;
  const clock = manualClock();

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    t = await createTestApp({}, clock, engine);
    await t.importRecords([FRANCE]);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await t.close();
  });

  const json = (username: string, apiKey: string) =>
    t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic(username, apiKey) } });
  const soapGet = (username: string, apiKey: string) =>
    t.app.inject({ url: `/api/reg.asmx/CheckFrance?RegistrationNumber=EG258MA&username=${username}`, headers: { authorization: t.basic(username, apiKey) } });

  it('accepts every live key of the account on the JSON and XML bindings, and refuses a revoked one at once', async () => {
    const first = await t.account('multi', 10);
    await t.services.accounts.setRequireApiKey('multi', true);
    const { apiKey: second, key } = await t.services.accounts.createKey('multi', 'ci server');
    expect(key).toMatchObject({ name: 'ci server', prefix: second.slice(0, 8), revokedAt: null, expiresAt: null });
    for (const k of [first, second]) {
      expect((await json('multi', k)).statusCode).toBe(200);
      expect((await soapGet('multi', k)).statusCode).toBe(200);
    }
    await t.services.accounts.revokeKey('multi', key.id);
    expect((await json('multi', second)).statusCode).toBe(401);
    expect((await soapGet('multi', second)).statusCode).toBe(500);
    expect((await json('multi', first)).statusCode).toBe(200);
  });

  it('keeps a rolled key working through its grace period, and not a millisecond after', async () => {
    const old = await t.account('roll', 10);
    const [original] = await t.services.accounts.listKeys('roll');
    const rolled = await t.services.accounts.rollKey('roll', original?.id ?? 0, 3600);
    expect(rolled.key.name).toBe('default');
    expect(rolled.old.expiresAt).toBe(new Date(clock.now().getTime() + 3600_000).toISOString());
    expect((await json('roll', old)).statusCode).toBe(200);
    expect((await json('roll', rolled.apiKey)).statusCode).toBe(200);
    clock.advance(3600_000);
    expect((await json('roll', old)).statusCode).toBe(401);
    expect((await json('roll', rolled.apiKey)).statusCode).toBe(200);
    await expect(t.services.accounts.rollKey('roll', original?.id ?? 0)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('refuses a key of another account, a key id of another account, bad names and too long grace periods', async () => {
    const alice = await t.account('alice', 5);
    await t.account('bob', 5);
    expect((await json('bob', alice)).statusCode).toBe(401);
    const [aliceKey] = await t.services.accounts.listKeys('alice');
    await expect(t.services.accounts.revokeKey('bob', aliceKey?.id ?? 0)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(t.services.accounts.rollKey('bob', aliceKey?.id ?? 0)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await json('alice', alice)).statusCode).toBe(200);
    await expect(t.services.accounts.createKey('alice', '')).rejects.toBeInstanceOf(AccountError);
    await expect(t.services.accounts.createKey('alice', 'x'.repeat(65))).rejects.toBeInstanceOf(AccountError);
    await expect(t.services.accounts.rollKey('alice', aliceKey?.id ?? 0, 31 * 24 * 3600)).rejects.toMatchObject({ code: 'INVALID' });
  });

  it('records last_used_at without a write per lookup: at most once a minute per key', async () => {
    const key = await t.account('used', 10);
    const lastUsed = async () => (await t.services.accounts.listKeys('used'))[0]?.lastUsedAt;
    expect(await lastUsed()).toBeNull();
    const firstUse = clock.now().toISOString();
    expect((await json('used', key)).statusCode).toBe(200);
    clock.advance(1000);
    expect((await json('used', key)).statusCode).toBe(200);
    // Written in a batch about a second later, off the request.
    await vi.waitFor(async () => { expect(await lastUsed()).toBe(firstUse); }, { timeout: 5000 });
    clock.advance(KEY_USE_WRITE_INTERVAL_MS);
    const later = clock.now().toISOString();
    expect((await json('used', key)).statusCode).toBe(200);
    await vi.waitFor(async () => { expect(await lastUsed()).toBe(later); }, { timeout: 5000 });
  });
});

describe.each(ENGINES)('migration 0004 on %s', (engine) => {
  it("moves each account's single key into api_keys, where it keeps authenticating", async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    // A store at migration 0003, with an account as it was then.
    const early = await storeAtMigration(engine, '0003-account-rate-limits');
    try {
      await sql`insert into accounts (username, api_key_hash, credits, disabled, require_api_key, created_at) values ('old', ${hashApiKey('legacy-key')}, 3, 0, 0, '2026-01-01T00:00:00.000Z')`.execute(early.db);
      await early.opened();

      const t = await createTestApp(early.env, undefined, 'sqlite');
      try {
        const keys = await t.services.accounts.listKeys('old');
        expect(keys).toMatchObject([{ name: 'default', prefix: null, createdAt: '2026-01-01T00:00:00.000Z', revokedAt: null }]);
        await t.importRecords([FRANCE]);
        const res = await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('old', 'legacy-key') } });
        expect(res.statusCode).toBe(200);
      } finally {
        await t.app.close();
      }
    } finally {
      await early.remove();
    }
  });
});
