import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { LedgerEntry } from '../../src/credits/credit-ledger.repository.js';
import { createServices } from '../../src/services.js';
import { openStorage } from '../../src/storage/create-database.js';
import { tempDir } from '../helpers/test-app.js';
import { cli, json, openStore, type Store } from './cli-harness.js';

const FRANCE = {
  operation: 'CheckFrance',
  key: { RegistrationNumber: 'EG258MA' },
  vehicle: { Description: 'Peugeot 208 Allure', RegistrationYear: '2019', CarMake: { CurrentTextValue: 'PEUGEOT' }, CarModel: { CurrentTextValue: '208' } },
};
const USA = {
  operation: 'CheckUSA',
  key: { RegistrationNumber: 'H84JAE', State: 'NJ' },
  vehicle: { Description: 'Honda Accord', RegistrationYear: '2004', CarMake: { CurrentTextValue: 'Honda' }, CarModel: { CurrentTextValue: 'Accord' } },
};

/** Matches a JavaScript stack frame ("    at fn (file:1:2)"): operators must never see one. */
const STACK_FRAME = /^\s+at\s/m;
const API_KEY = /^[A-Za-z0-9_-]{43}$/;

let store: Store;

beforeEach(async () => {
  store = await openStore();
  await store.importRecords([FRANCE, USA]);
});

afterEach(async () => {
  await store.close();
  // The import command reports failure through process.exitCode; keep one test's failure out of the next.
  process.exitCode = undefined;
});

/** Creates an account through the CLI and returns its key. */
async function createAccount(name: string, credits = 10): Promise<string> {
  const run = await cli(store.env, ['accounts', 'create', name, '--credits', String(credits), '--json']);
  expect(run.code, run.err).toBe(0);
  return (json(run) as { apiKey: string }).apiKey;
}

async function showAccount(name: string): Promise<unknown> {
  const run = await cli(store.env, ['accounts', 'show', name, '--json']);
  expect(run.code, run.err).toBe(0);
  return json(run);
}

async function ledger(name: string, ...extra: string[]): Promise<LedgerEntry[]> {
  const run = await cli(store.env, ['usage', name, '--json', ...extra]);
  expect(run.code, run.err).toBe(0);
  return json(run) as LedgerEntry[];
}

describe('accounts create', () => {
  it('prints the API key once: create shows it, show never does, and the key authenticates at once', async () => {
    const created = await cli(store.env, ['accounts', 'create', 'alice', '--credits', '5']);
    expect(created.code).toBe(0);
    const key = /API key \(shown only this once\): (\S+)/.exec(created.out)?.[1] ?? '';
    expect(key).toMatch(API_KEY);

    const shown = await cli(store.env, ['accounts', 'show', 'alice']);
    const shownJson = await cli(store.env, ['accounts', 'show', 'alice', '--json']);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('alice');
    expect(shown.out).not.toContain(key);
    expect(shownJson.out).not.toContain(key);

    const response = await store.lookup('CheckFrance/EG258MA', 'alice', key);
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-credits-remaining']).toBe('4');
  });

  it('--json prints exactly {username, apiKey, credits}', async () => {
    const run = await cli(store.env, ['accounts', 'create', 'bob', '--credits', '25', '--json']);
    expect(run.code).toBe(0);
    const body = json(run) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['apiKey', 'credits', 'username']);
    expect(body).toMatchObject({ username: 'bob', credits: 25 });
    expect(body.apiKey).toMatch(API_KEY);
  });

  it('starts an account with 0 credits when --credits is not given', async () => {
    const run = await cli(store.env, ['accounts', 'create', 'zero', '--json']);
    expect(json(run)).toMatchObject({ username: 'zero', credits: 0 });
    expect(await ledger('zero')).toEqual([]);
  });

  it('refuses a duplicate account with exit 1 and leaves the first key working', async () => {
    const key = await createAccount('alice', 3);
    const again = await cli(store.env, ['accounts', 'create', 'alice', '--credits', '100', '--json']);
    expect(again.code).toBe(1);
    expect(again.out).toBe('');
    expect(again.err).toBe('vehicle-lookup: account alice already exists');
    expect(await showAccount('alice')).toMatchObject({ credits: 3 });
    expect((await store.lookup('CheckFrance/EG258MA', 'alice', key)).statusCode).toBe(200);
  });

  it.each([
    ['contains a space', 'has space'],
    ['contains a colon (it would break HTTP Basic)', 'a:b'],
    ['is longer than 64 characters', 'a'.repeat(65)],
    ['is empty', ''],
  ])('refuses a username that %s', async (_why, name) => {
    const run = await cli(store.env, ['accounts', 'create', name, '--json']);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^vehicle-lookup: username must be 1 to 64 characters/);
    expect(run.err).not.toMatch(STACK_FRAME);
    expect(run.out).toBe('');
  });

  it.each(['abc', '1.5', '1e3', '-1', '1000000001'])('refuses --credits %s and creates nothing', async (credits) => {
    const run = await cli(store.env, ['accounts', 'create', 'carol', '--credits', credits]);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^vehicle-lookup: .*credits/);
    expect(run.err).not.toMatch(STACK_FRAME);
    expect((await cli(store.env, ['accounts', 'show', 'carol'])).code).toBe(1);
  });
});

describe('accounts show', () => {
  it('--json has username, credits and disabled, and never the key or its hash', async () => {
    const key = await createAccount('alice', 7);
    const run = await cli(store.env, ['accounts', 'show', 'alice', '--json']);
    expect(run.code).toBe(0);
    const body = json(run) as Record<string, unknown>;
    expect(body).toMatchObject({ username: 'alice', credits: 7, disabled: false });
    expect(Object.keys(body).filter((k) => /hash|^apiKey$/i.test(k))).toEqual([]);
    expect(run.out).not.toContain(key);
  });

  it('shows the balance after lookups, as the server debited it', async () => {
    const key = await createAccount('alice', 7);
    await store.lookup('CheckFrance/EG258MA', 'alice', key);
    await store.lookup('CheckUSA/H84JAE/NJ', 'alice', key);
    expect(await showAccount('alice')).toMatchObject({ credits: 5 });
    const text = await cli(store.env, ['accounts', 'show', 'alice']);
    expect(text.out).toMatch(/^credits:\s+5$/m);
    expect(text.out).toMatch(/^disabled:\s+no$/m);
  });
});

describe('accounts rotate-key', () => {
  it('makes the old key fail with 401 and the new key work', async () => {
    const oldKey = await createAccount('alice', 5);
    const run = await cli(store.env, ['accounts', 'rotate-key', 'alice', '--json']);
    expect(run.code).toBe(0);
    const body = json(run) as { username: string; apiKey: string };
    expect(body.username).toBe('alice');
    expect(body.apiKey).toMatch(API_KEY);
    expect(body.apiKey).not.toBe(oldKey);

    const withOld = await store.lookup('CheckFrance/EG258MA', 'alice', oldKey);
    expect(withOld.statusCode).toBe(401);
    const withNew = await store.lookup('CheckFrance/EG258MA', 'alice', body.apiKey);
    expect(withNew.statusCode).toBe(200);
    // The failed attempt cost nothing; the successful one cost 1.
    expect(await showAccount('alice')).toMatchObject({ credits: 4 });
  });

  it('prints the new key in text output too', async () => {
    await createAccount('alice', 1);
    const run = await cli(store.env, ['accounts', 'rotate-key', 'alice']);
    const key = /New API key for alice \(shown only this once\): (\S+)/.exec(run.out)?.[1] ?? '';
    expect(key).toMatch(API_KEY);
    expect((await store.lookup('CheckFrance/EG258MA', 'alice', key)).statusCode).toBe(200);
  });
});

describe('accounts disable / enable', () => {
  it('disable makes lookups fail without debiting; enable restores them', async () => {
    const key = await createAccount('alice', 5);
    const disabled = await cli(store.env, ['accounts', 'disable', 'alice', '--json']);
    expect(disabled.code).toBe(0);
    expect(json(disabled)).toMatchObject({ username: 'alice', disabled: true });

    const refused = await store.lookup('CheckFrance/EG258MA', 'alice', key);
    expect(refused.statusCode).not.toBe(200);
    expect(refused.body).toContain('disabled');
    expect(await showAccount('alice')).toMatchObject({ credits: 5, disabled: true });

    const enabled = await cli(store.env, ['accounts', 'enable', 'alice']);
    expect(enabled.code).toBe(0);
    expect(enabled.out).toBe('Account alice enabled.');
    const served = await store.lookup('CheckFrance/EG258MA', 'alice', key);
    expect(served.statusCode).toBe(200);
    expect(await showAccount('alice')).toMatchObject({ credits: 4, disabled: false });
  });
});

describe('accounts require-api-key', () => {
  it('turns the flag on, and --off turns it off again', async () => {
    await createAccount('alice', 1);
    expect(await showAccount('alice')).toMatchObject({ requireApiKey: false });
    const on = await cli(store.env, ['accounts', 'require-api-key', 'alice', '--json']);
    expect(on.code).toBe(0);
    expect(json(on)).toMatchObject({ username: 'alice', requireApiKey: true });
    expect(await showAccount('alice')).toMatchObject({ requireApiKey: true });
    const off = await cli(store.env, ['accounts', 'require-api-key', 'alice', '--off', '--json']);
    expect(json(off)).toMatchObject({ requireApiKey: false });
    expect(await showAccount('alice')).toMatchObject({ requireApiKey: false });
  });
});

describe('credits add', () => {
  it('writes a topup ledger row with the balance after it, shown by usage --json', async () => {
    await createAccount('alice', 10);
    const run = await cli(store.env, ['credits', 'add', 'alice', '15', '--json']);
    expect(run.code).toBe(0);
    expect(json(run)).toEqual({ username: 'alice', added: 15, credits: 25 });

    const rows = await ledger('alice');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ kind: 'topup', delta: 10, balanceAfter: 10 });
    expect(rows[1]).toMatchObject({ kind: 'topup', delta: 15, balanceAfter: 25, operation: null, interface: null });
    expect(await showAccount('alice')).toMatchObject({ credits: 25 });
  });

  it('records --note on the ledger row', async () => {
    await createAccount('alice', 0);
    await cli(store.env, ['credits', 'add', 'alice', '3', '--note', 'invoice 2026-0042']);
    expect(await ledger('alice')).toEqual([expect.objectContaining({ kind: 'topup', delta: 3, balanceAfter: 3, query: 'invoice 2026-0042' })]);
  });

  it('prints the new balance in text output', async () => {
    await createAccount('alice', 2);
    const run = await cli(store.env, ['credits', 'add', 'alice', '5']);
    expect(run.out).toBe('Added 5 credits to alice; balance 7.');
  });

  it.each(['0', '-3', 'ten', '2.5', '1000000001'])('refuses %s credits with exit 1 and writes no ledger row', async (amount) => {
    await createAccount('alice', 2);
    const run = await cli(store.env, ['credits', 'add', 'alice', amount]);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^vehicle-lookup: .*credits/);
    expect(run.err).not.toMatch(STACK_FRAME);
    expect(await ledger('alice')).toHaveLength(1);
    expect(await showAccount('alice')).toMatchObject({ credits: 2 });
  });
});

describe('usage', () => {
  it('--json lists the debits the server wrote and the top-ups, oldest first', async () => {
    const key = await createAccount('alice', 3);
    expect((await store.lookup('CheckUSA/h84-jae/nj', 'alice', key)).statusCode).toBe(200);
    await cli(store.env, ['credits', 'add', 'alice', '4']);

    const rows = await ledger('alice');
    expect(rows.map((r) => [r.kind, r.delta, r.balanceAfter])).toEqual([
      ['topup', 3, 3],
      ['debit', -1, 2],
      ['topup', 4, 6],
    ]);
    expect(rows[1]).toMatchObject({ operation: 'CheckUSA', interface: 'json', query: 'H84JAE|NJ' });
    expect(rows[1]?.requestId).toEqual(expect.any(String));
  });

  it('prints a table and a total of charged lookups in text output', async () => {
    const key = await createAccount('alice', 3);
    await store.lookup('CheckFrance/EG258MA', 'alice', key);
    await store.lookup('CheckFrance/EG258MA', 'alice', key);
    const run = await cli(store.env, ['usage', 'alice']);
    expect(run.code).toBe(0);
    expect(run.out).toContain('CheckFrance');
    expect(run.out).toMatch(/2 lookups charged, 2 credits\.$/);
  });

  it('lists free lookups with their reason and counts them apart from the charged ones', async () => {
    const key = await createAccount('alice', 3);
    expect((await cli(store.env, ['test-plates', 'add', 'CheckFrance', 'EG258MA'])).code).toBe(0);
    await store.lookup('CheckFrance/EG258MA', 'alice', key);
    await store.lookup('CheckUSA/H84JAE/NJ', 'alice', key);
    const run = await cli(store.env, ['usage', 'alice']);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/ 0 +3 +free +json +CheckFrance +EG258MA \(free: test-plate\) {2}key default\n/);
    expect(run.out).toMatch(/1 lookups charged, 1 credits; 1 free\.$/);
  });

  it('--since keeps only rows from that date, or from that exact time, on', async () => {
    // Rows at known times come from the services with a fixed clock; the CLI only reads them.
    const storage = await openStorage({ dataDir: store.dir });
    let now = new Date('2020-03-01T10:00:00Z');
    const services = createServices(storage, { clock: { now: () => now }, requireApiKeyEverywhere: false });
    await services.accounts.create('carol', 0);
    await services.accounts.grantCredits({ account: 'carol', amount: 1, note: 'march' });
    now = new Date('2020-06-01T10:00:00Z');
    await services.accounts.grantCredits({ account: 'carol', amount: 2, note: 'june morning' });
    now = new Date('2020-06-01T15:00:00Z');
    await services.accounts.grantCredits({ account: 'carol', amount: 4, note: 'june afternoon' });
    await storage.close();

    const notes = async (...since: string[]): Promise<Array<string | null>> => (await ledger('carol', ...since)).map((r) => r.query);
    expect(await notes()).toEqual(['march', 'june morning', 'june afternoon']);
    expect(await notes('--since', '2020-05-01')).toEqual(['june morning', 'june afternoon']);
    expect(await notes('--since', '2020-06-01T12:00:00Z')).toEqual(['june afternoon']);
    expect(await notes('--since', '2021-01-01')).toEqual([]);
    const empty = await cli(store.env, ['usage', 'carol', '--since', '2021-01-01']);
    expect(empty.out).toBe('No ledger rows for carol since 2021-01-01T00:00:00.000Z.');
  });

  it.each(['yesterday', '2026-13-45', ''])('refuses an unreadable --since %j with exit 1', async (since) => {
    await createAccount('alice', 1);
    const run = await cli(store.env, ['usage', 'alice', '--since', since, '--json']);
    expect(run.code).toBe(1);
    expect(run.err).toContain('--since must be a date');
    expect(run.out).toBe('');
  });
});

describe('errors', () => {
  it.each([
    [['accounts', 'show', 'ghost']],
    [['accounts', 'show', 'ghost', '--json']],
    [['accounts', 'rotate-key', 'ghost']],
    [['accounts', 'disable', 'ghost']],
    [['accounts', 'enable', 'ghost']],
    [['accounts', 'require-api-key', 'ghost']],
    [['credits', 'add', 'ghost', '5']],
    [['usage', 'ghost', '--json']],
  ])('%j on an unknown account exits 1 with one clear line and no stack trace', async (argv) => {
    const run = await cli(store.env, argv);
    expect(run.code).toBe(1);
    expect(run.errLines).toEqual(['vehicle-lookup: no account named ghost']);
    expect(run.out).toBe('');
  });

  it('an unknown command is a usage error (exit 2) with help', async () => {
    const run = await cli(store.env, ['acounts', 'list']);
    expect(run.code).toBe(2);
    expect(run.err).toContain("unknown command 'acounts'");
  });

  it('a missing argument is a usage error (exit 2)', async () => {
    const run = await cli(store.env, ['credits', 'add', 'alice']);
    expect(run.code).toBe(2);
    expect(run.err).toContain("missing required argument 'n'");
  });

  it('a bad configuration value exits 1 with the variable named', async () => {
    const run = await cli({ ...store.env, DB_POOL_SIZE: 'many' }, ['accounts', 'show', 'alice']);
    expect(run.code).toBe(1);
    expect(run.err).toBe('vehicle-lookup: DB_POOL_SIZE must be a whole number from 1 to 1000 (got "many")');
  });

  it('account, credit, test-plate and import commands do not read the upstream provider or server settings', async () => {
    // Issue 14: `DVSA_CLIENT_ID=x vehicle-lookup accounts create alice` used to fail on the DVSA configuration.
    const dvsa = await cli({ ...store.env, DVSA_CLIENT_ID: 'x' }, ['accounts', 'create', 'dvsa-half-configured', '--json']);
    expect(dvsa.err).toBe('');
    expect(json(dvsa)).toMatchObject({ username: 'dvsa-half-configured' });
    const env = { ...store.env, DVSA_CLIENT_ID: 'x', RDW_ENABLED: 'maybe', DVLA_API_KEY: 'two words', PORT: 'http', LOG_LEVEL: 'chatty' };
    expect((await cli(env, ['accounts', 'show', 'dvsa-half-configured'])).code).toBe(0);
    expect((await cli(env, ['credits', 'add', 'dvsa-half-configured', '5'])).code).toBe(0);
    expect((await cli(env, ['test-plates', 'list'])).code).toBe(0);
    expect((await cli(env, ['import', store.writeJsonl('empty-half-configured.jsonl', [])])).code).toBe(0);
    // Issue 16's operator and audit commands are core commands too.
    const admin = await cli(env, ['admin', 'create', 'x', '--json']);
    expect(admin.err).toBe('');
    expect(json(admin)).toMatchObject({ name: 'x', role: 'admin' });
    expect((await cli(env, ['audit', '--action', 'user.create', '--json'])).code).toBe(0);
  });

  it('a command that uses a provider still refuses that provider\'s bad configuration, and the server refuses DVSA half set', async () => {
    const run = await cli({ ...store.env, VIN_DECODER: 'maybe' }, ['vin', 'status']);
    expect(run.code).toBe(1);
    expect(run.err).toBe('vehicle-lookup: VIN_DECODER must be on or off (got "maybe")');
    // The server reads the whole configuration (src/main.ts: loadConfig, exit 1 on ConfigError).
    expect(() => loadConfig({ ...store.env, DVSA_CLIENT_ID: 'x' })).toThrow(/DVSA MOT history API needs .*; missing: DVSA_CLIENT_SECRET, DVSA_API_KEY, DVSA_TOKEN_URL$/);
  });

  it('a failed import does not make later commands in the same process report failure', async () => {
    // runCli returns an exit code per run; a failure must not leak into the next run (or the host process).
    const bad = store.writeJsonl('bad.jsonl', ['not json']);
    expect((await cli(store.env, ['import', bad])).code).toBe(1);
    const next = await cli(store.env, ['accounts', 'create', 'after-import', '--json']);
    expect(json(next)).toMatchObject({ username: 'after-import' });
    expect(next.code).toBe(0);
  });
});

describe('test-plates', () => {
  it('add makes a lookup of that key cost 0 credits with a free ledger row, no debit; remove makes it cost again', async () => {
    const key = await createAccount('alice', 5);
    const added = await cli(store.env, ['test-plates', 'add', 'CheckUSA', 'h84 jae', 'nj', '--json']);
    expect(added.code).toBe(0);
    expect(json(added)).toEqual({ operation: 'CheckUSA', key: 'H84JAE|NJ', added: true });
    expect(json(await cli(store.env, ['test-plates', 'add', 'CheckUSA', 'H84JAE', 'NJ', '--json']))).toEqual({ operation: 'CheckUSA', key: 'H84JAE|NJ', added: false });

    const free = await store.lookup('CheckUSA/H84JAE/NJ', 'alice', key);
    expect(free.statusCode).toBe(200);
    expect(free.headers['x-credits-charged']).toBe('0');
    expect(await showAccount('alice')).toMatchObject({ credits: 5 });
    expect((await ledger('alice')).filter((r) => r.kind === 'debit')).toEqual([]);
    expect((await ledger('alice')).filter((r) => r.kind === 'free')).toEqual([expect.objectContaining({ freeReason: 'test-plate', delta: 0, balanceAfter: 5, query: 'H84JAE|NJ' })]);
    // Only that key is free: another record of the same operation still costs.
    expect((await store.lookup('CheckFrance/EG258MA', 'alice', key)).headers['x-credits-charged']).toBe('1');

    const removed = await cli(store.env, ['test-plates', 'remove', 'CheckUSA', 'H84JAE', 'NJ', '--json']);
    expect(json(removed)).toEqual({ operation: 'CheckUSA', key: 'H84JAE|NJ', removed: true });
    const paid = await store.lookup('CheckUSA/H84JAE/NJ', 'alice', key);
    expect(paid.headers['x-credits-charged']).toBe('1');
    expect(await showAccount('alice')).toMatchObject({ credits: 3 });
  });

  it('list shows the plates with their keys normalised as a lookup normalises them', async () => {
    expect(json(await cli(store.env, ['test-plates', 'list', '--json']))).toEqual([]);
    expect((await cli(store.env, ['test-plates', 'list'])).out).toBe('No test plates.');
    await cli(store.env, ['test-plates', 'add', 'CheckGermany', '0005alq']);
    await cli(store.env, ['test-plates', 'add', 'CheckUSA', 'ab-12', 'ca']);
    await cli(store.env, ['test-plates', 'add', 'CheckUSA', 'AB12', 'CA']);
    const run = await cli(store.env, ['test-plates', 'list', '--json']);
    expect(json(run)).toEqual([
      { operation: 'CheckGermany', key: '0005/ALQ' },
      { operation: 'CheckUSA', key: 'AB12|CA' },
    ]);
    expect((await cli(store.env, ['test-plates', 'list'])).out).toBe('CheckGermany 0005/ALQ\nCheckUSA AB12|CA');
  });

  it('remove of a plate that is not a test plate says so', async () => {
    const run = await cli(store.env, ['test-plates', 'remove', 'CheckFrance', 'EG258MA', '--json']);
    expect(run.code).toBe(0);
    expect(json(run)).toEqual({ operation: 'CheckFrance', key: 'EG258MA', removed: false });
  });

  it.each([
    [['CheckAtlantis', 'AB12'], 'unknown operation CheckAtlantis'],
    [['CheckUSA', 'AB12'], 'CheckUSA takes 2 key values: RegistrationNumber State'],
    [['CheckUSA', 'AB12', 'ZZ'], 'State must be one of'],
    [['CheckGermany', '12/AB'], 'KBANumber must be a 4-digit HSN'],
  ])('add %j is refused with exit 1: %s', async (args, message) => {
    const run = await cli(store.env, ['test-plates', 'add', ...args]);
    expect(run.code).toBe(1);
    expect(run.err).toContain(message);
    expect(run.err).not.toMatch(STACK_FRAME);
    expect(json(await cli(store.env, ['test-plates', 'list', '--json']))).toEqual([]);
  });
});

describe('storage selection', () => {
  it('DATABASE_URL selects the store over DATA_DIR', async () => {
    const other = tempDir();
    try {
      const file = join(other.path, 'elsewhere.sqlite');
      const env = { ...store.env, DATABASE_URL: `sqlite:${file}` };
      expect((await cli(env, ['accounts', 'create', 'dora', '--json'])).code).toBe(0);
      expect(existsSync(file)).toBe(true);
      expect((await cli(env, ['accounts', 'show', 'dora', '--json'])).code).toBe(0);
      // The DATA_DIR store (the running app's) never saw the account.
      expect((await cli(store.env, ['accounts', 'show', 'dora'])).code).toBe(1);
    } finally {
      other.remove();
    }
  });
});
