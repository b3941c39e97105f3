import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, json, openStore, type Store } from '../cli/cli-harness.js';

const FRANCE = { operation: 'CheckFrance', key: { RegistrationNumber: 'EG258MA' }, vehicle: { Description: 'Peugeot 208 Allure' } };
const USA = { operation: 'CheckUSA', key: { RegistrationNumber: 'H84JAE', State: 'NJ' }, vehicle: { Description: 'Honda Accord' } };

interface KeyJson {
  id: number;
  name: string;
  cap: { credits: number; period: string } | null;
  operations: string[] | null;
  perSecond: number | null;
  perDay: number | null;
  allowedIps: string[] | null;
  labels: Record<string, string>;
  spend?: { credits: number; period: string };
}

/** Issue 33's CLI: `accounts add-key`, `accounts key`, `accounts keys`, `usage --key`, with every setting flag and its --clear-* undo. */
describe('key commands', () => {
  let store: Store;
  beforeEach(async () => {
    store = await openStore();
    await store.importRecords([FRANCE, USA]);
    expect((await cli(store.env, ['accounts', 'create', 'acme', '--credits', '100'])).code).toBe(0);
  });
  afterEach(async () => {
    await store.close();
    process.exitCode = undefined;
  });

  it('adds a key with its rules and prints it once, shows and changes it, clears rules, lists keys with spend, and filters usage by key', async () => {
    const added = json(
      await cli(store.env, ['accounts', 'add-key', 'acme', 'contractor', '--operations', 'CheckUSA', '--cap', '500', '--cap-period', 'month', '--per-second', '2', '--per-day', '1000', '--allow-ip', '203.0.113.0/24,2001:db8::/32', '--label', 'team=partners', '--label', 'env=prod', '--json']),
    ) as { key: KeyJson; apiKey: string };
    expect(added.apiKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(added.key).toMatchObject({ name: 'contractor', operations: ['CheckUSA'], cap: { credits: 500, period: 'month' }, perSecond: 2, perDay: 1000, allowedIps: ['203.0.113.0/24', '2001:db8::/32'], labels: { team: 'partners', env: 'prod' } });

    expect((await store.lookup('CheckUSA/H84JAE/NJ', 'acme', added.apiKey)).statusCode).toBe(403); // not from an allowed address
    const cleared = json(await cli(store.env, ['accounts', 'key', 'acme', 'contractor', '--clear-allow-ip', '--clear-per-second', '--label', 'tier=gold', '--json'])) as { key: KeyJson };
    expect(cleared.key).toMatchObject({ allowedIps: null, perSecond: null, perDay: 1000, labels: { team: 'partners', env: 'prod', tier: 'gold' } });
    expect((await store.lookup('CheckUSA/H84JAE/NJ', 'acme', added.apiKey)).statusCode).toBe(200);
    expect((await store.lookup('CheckFrance/EG258MA', 'acme', added.apiKey)).statusCode).toBe(403);
    const all = json(await cli(store.env, ['accounts', 'key', 'acme', 'contractor', '--operations', 'all', '--clear-cap', '--clear-labels', '--clear-per-day', '--json'])) as { key: KeyJson };
    expect(all.key).toMatchObject({ operations: null, cap: null, perDay: null, labels: {} });
    expect((await store.lookup('CheckFrance/EG258MA', 'acme', added.apiKey)).statusCode).toBe(200);

    const shown = await cli(store.env, ['accounts', 'key', 'acme', 'contractor']);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('contractor');
    expect(shown.out).toContain('spent 2');

    const keys = json(await cli(store.env, ['accounts', 'keys', 'acme', '--json'])) as { keys: KeyJson[] };
    expect(keys.keys.map((k) => [k.name, k.spend?.credits])).toEqual([
      ['default', 0],
      ['contractor', 2],
    ]);
    const usage = json(await cli(store.env, ['usage', 'acme', '--key', 'contractor', '--json'])) as Array<{ operation: string; key: string }>;
    expect(usage.map((r) => [r.operation, r.key])).toEqual([
      ['CheckUSA', 'contractor'],
      ['CheckFrance', 'contractor'],
    ]);
    const audit = await store.built.services.audit.list({ action: 'key.update', limit: 10 });
    expect(audit).toHaveLength(2);
    expect(audit.every((r) => r.actor.kind === 'cli')).toBe(true);
  });

  it('refuses contradictory and invalid flags with a message and exit code 1, changing nothing', async () => {
    expect((await cli(store.env, ['accounts', 'add-key', 'acme', 'k', '--cap', '5'])).code).toBe(0);
    const both = await cli(store.env, ['accounts', 'key', 'acme', 'k', '--cap', '3', '--clear-cap']);
    expect(both.code).toBe(1);
    expect(both.err).toContain('give --cap or --clear-cap, not both');
    const period = await cli(store.env, ['accounts', 'key', 'acme', 'k', '--cap-period', 'week']);
    expect(period.err).toContain('--cap-period must be one of day, month, total');
    const op = await cli(store.env, ['accounts', 'key', 'acme', 'k', '--operations', 'country:Atlantis']);
    expect(op.code).toBe(1);
    expect(op.err).toContain('unknown country');
    const unknown = await cli(store.env, ['usage', 'acme', '--key', 'nope', '--json']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('has no key named nope');
    const k = json(await cli(store.env, ['accounts', 'key', 'acme', 'k', '--json'])) as { key: KeyJson };
    expect(k.key.cap).toEqual({ credits: 5, period: 'month' });
  });
});
