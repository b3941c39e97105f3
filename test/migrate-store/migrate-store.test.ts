import { UserService } from '../../src/users/user.service.js';
import { systemClock } from '../../src/shared/clock.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { UpstreamCacheRepository } from '../../src/providers/upstream/upstream-cache.repository.js';
import { UpstreamSpendRepository } from '../../src/providers/upstream/upstream-spend.js';
import { UpstreamBalanceRepository } from '../../src/providers/upstream/upstream-balance.repository.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { copyStore } from '../../src/storage/store-copy.js';
import { basic, cli, json, type CliRun } from '../cli/cli-harness.js';
import { freshPostgresDatabase, postgresAvailable } from '../helpers/engines.js';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';

/**
 * The tables the fixture below fills through the real services. The copy itself discovers tables
 * from the schema; this list exists so that a migration adding a table fails the test below until
 * the fixture gives the new table rows and its copy is proven.
 */
const FIXTURE_TABLES = [
  'accounts',
  'api_keys',
  'audit_log',
  'credit_alert_cursor',
  'credit_alert_fired',
  'credit_alert_settings',
  'credit_references',
  'idempotency_keys',
  'idempotency_results',
  'imports',
  'invites',
  'ledger',
  'login_throttle',
  'lookup_stats',
  'ncap_ratings',
  'operation_records',
  'operator_tokens',
  'records',
  'sessions',
  'test_plates',
  'upstream_alert_marks',
  'upstream_balances',
  'upstream_cache',
  'upstream_spend',
  'upstream_states',
  'upstream_stats',
  'users',
  'webhook_deliveries',
  'webhook_endpoints',
  'webhook_messages',
];

const FRANCE = { operation: 'CheckFrance', key: { RegistrationNumber: 'EG258MA' }, vehicle: { Description: 'Peugeot 208 Allure', CarMake: { CurrentTextValue: 'PEUGEOT' }, CarModel: { CurrentTextValue: '208' } } };
const USA = { operation: 'CheckUSA', key: { RegistrationNumber: 'H84JAE', State: 'NJ' }, vehicle: { Description: 'Honda Accord', CarMake: { CurrentTextValue: 'Honda' }, CarModel: { CurrentTextValue: 'Accord' } } };
/** An answer of the original as its record file writes it: kept for its operation (operation_records, migration 0014). */
const RECORDED = {
  operation: 'CheckUKMinimal',
  key: { regNumber: 'LV04XYZ' },
  vehicle: { vehicleJson: '{ "Description": "ROVER 75 CLUB SE" }', vehicleData: { Description: 'ROVER 75 CLUB SE' } },
  source: 'regcheck',
  fetchedAt: '2026-11-27T13:05:09.120Z',
};
const USA_FREE = { operation: 'CheckUSA', key: { RegistrationNumber: 'TEST1', State: 'CA' }, vehicle: { Description: 'Test plate vehicle' } };
const NCAP = [
  { operation: 'CheckEuroNCap', ncap: { Make: 'Volvo', Model: 'XC60', Id: 90017, SortOrder: 1, Year: 2017 } },
  { operation: 'CheckEuroNCap', ncap: { Make: 'Volvo', Model: 'XC40', Id: 90018, SortOrder: 2, Year: 2018 } },
];

interface MigrateJson {
  source: string;
  target: string;
  tables: Record<string, number>;
  accounts: number;
  credits: number;
  ledgerRows: number;
  nextIds: Record<string, number>;
  verified: boolean;
  sourceChangedDuringCopy: boolean;
  seconds: number;
}

/** A SQLite store in a temporary directory, populated through the real app and then shut down. */
interface SourceStore {
  readonly dir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly keys: Readonly<Record<string, string>>;
}

async function inject(built: BuiltApp, path: string, username: string, apiKey: string, idempotencyKey?: string) {
  const headers = { authorization: basic(username, apiKey), ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) };
  return built.app.inject({ method: 'GET', url: `/api/json.aspx/${path}`, headers });
}

/**
 * Accounts with top-ups, charged and free lookups through the JSON interface (debits through the
 * pipeline), imports of vehicles and Euro NCAP ratings, a test plate, flags, rate limits, an
 * upstream cache entry and an idempotency key: every table holds rows.
 */
async function populate(dir: string): Promise<Record<string, string>> {
  const built = await buildApp(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' }));
  try {
    const s = built.services;
    const file = join(dir, 'fixture.jsonl');
    writeFileSync(file, [FRANCE, USA, USA_FREE, RECORDED, ...NCAP].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const summary = await s.importer.importFile(file, { skipInvalid: false, source: 'fixture' });
    expect(summary.committed).toBe(true);
    // An import job of the admin API (migration 0009), with its validation report.
    const upload = await s.imports.receive(Readable.from([`${JSON.stringify(FRANCE)}\nnot json\n`]));
    await s.imports.start({ kind: 'operator', name: 'root' }, upload, { fileName: 'fixture.jsonl', source: 'fixture', skipInvalid: true });
    await s.imports.whenIdle();

    const keys: Record<string, string> = {};
    for (const [name, credits] of [['alice', 10], ['bob', 5], ['carol', 3], ['dave', 0]] as const) {
      keys[name] = (await s.accounts.create(name, credits)).apiKey;
    }
    // A grant with a reference (migration 0013 records it in credit_references).
    await s.accounts.grantCredits({ account: 'bob', amount: 20, reference: 'INV-2026-117', note: 'invoice 2026-117' });
    await s.accounts.grantCredits({ account: 'dave', amount: 1 });
    await s.accounts.setDisabled('carol', true);
    await s.accounts.setRequireApiKey('dave', true);
    await s.accounts.setRateLimits('alice', { perSecond: 50, perDay: 0 });
    await s.testPlates.add('CheckUSA', 'TEST1|CA', SYSTEM_ACTOR);
    await new UpstreamCacheRepository(s.storage.db).put('dvla', 'AB12CDE', { status: 'found', payload: { make: 'FORD' } }, 3600, new Date());
    // Upstream spend and a fired balance alert of the original service (migration 0012).
    await s.storage.transaction((tx) => new UpstreamSpendRepository(s.storage.db).add(tx, [{ day: '2026-11-27', provider: 'regcheck', operation: 'Check', outcome: 'found', count: 3 }]));
    // The balance at the original every instance shares (migration 0015).
    await new UpstreamBalanceRepository(s.storage.db).publish('regcheck', 250, '2026-11-27T13:05:09.120Z');
    await s.storage.db.insertInto('upstream_alert_marks').values({ provider: 'regcheck', event: 'upstream.credits.low', credits: 42, fired_at: '2026-11-27T12:00:00.000Z' }).execute();
    // A paid upstream taken out for every instance, and the operator's spend there (migration 0018).
    await s.storage.db.insertInto('upstream_states').values({ provider: 'ukvd', state: 'out-of-funds', reason: 'InsufficientFunds', until: '2026-11-27T13:15:00.000Z', changed_at: '2026-11-27T13:05:00.000Z' }).execute();
    await s.storage.db.insertInto('upstream_spend').values({ provider: 'ukvd', day: '2026-11-27', spent_micros: 1_250_000, calls: 5 }).execute();
    // Operators and customers (issue 16): users, an invite, a session, an operator token, audit rows.
    const users = new UserService(s.storage, systemClock, s.audit, s.accounts);
    const { inviteToken } = await users.createOperator('root', 'admin', true);
    const root = await users.acceptInvite(inviteToken ?? '', 'a long enough password');
    await users.startSession(root, '127.0.0.1');
    await users.createToken(root, 'ci', 'read');
    await users.createCustomer('alice', 'owner@alice', 'owner');
    // A failed login, counted in the store without Redis (migration 0010).
    expect((await built.app.inject({ method: 'POST', url: '/admin/api/login', payload: { username: 'root', password: 'not the password' } })).statusCode).toBe(401);

    const charged: Array<[string, string]> = [
      ['alice', 'CheckFrance/EG258MA'],
      ['alice', 'CheckUSA/H84JAE/NJ'],
      ['bob', 'CheckFrance/EG258MA'],
      ['alice', 'CheckEuroNCap/Volvo/XC'],
      ['bob', 'CheckUSA/H84JAE/NJ'],
      ['alice', 'CheckFrance/EG258MA'],
    ];
    for (const [i, [user, path]] of charged.entries()) {
      // The last one carries an Idempotency-Key: its record is copied too.
      const response = await inject(built, path, user, keys[user] ?? '', i === charged.length - 1 ? 'fixture-key-1' : undefined);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['x-credits-charged']).toBe('1');
    }
    expect((await inject(built, 'CheckFrance/EG258MA', 'alice', keys.alice ?? '', 'fixture-key-1')).headers['x-credits-charged']).toBe('0');
    // A free test plate and a failed lookup: neither writes a ledger row.
    expect((await inject(built, 'CheckUSA/TEST1/CA', 'bob', keys.bob ?? '')).headers['x-credits-charged']).toBe('0');
    expect((await inject(built, 'CheckFrance/ZZ999ZZ', 'bob', keys.bob ?? '')).statusCode).toBe(500);

    // Low-credit alerts and webhooks (migration 0005): a disabled endpoint, so nothing leaves the
    // machine; its test message is settled as failed, which writes a delivery-log row.
    const alice = (await s.accounts.show('alice')).id;
    const { endpoint } = await s.alerting.webhooks.create({ actor: 'account', accountId: alice }, { url: 'https://hooks.example.com/in', enabled: false });
    await s.alerting.webhooks.sendTest({ actor: 'account', accountId: alice }, endpoint.id);
    await s.alerting.dispatcher.drain();
    // The receiver's answer in the delivery log (migration 0014): written here as a receiver's
    // answer would have been, since the fixture's endpoint sends nothing off the machine.
    const logged = await s.storage.db.updateTable('webhook_deliveries').set({ response_body: '{"error":"invalid signature"}\n' }).executeTakeFirst();
    expect(logged.numUpdatedRows).toBe(1n);
    await s.alerting.alerts.setThresholds(alice, [8, 0]);
    expect(await s.alerting.alerts.fire(alice, 8, 6)).toBe(true);
    await s.alerting.alerts.sweep();
    return keys;
  } finally {
    // Closing writes the lookups above to lookup_stats (the rollup's last flush, migration 0011).
    await built.app.close();
  }
}

/** Every row of every table (Kysely's own excluded), ordered by all columns. */
async function dump(storage: Storage): Promise<Record<string, unknown[]>> {
  const tables = (await storage.db.introspection.getTables()).filter((t) => !t.isView && (storage.engine === 'sqlite' || t.schema === 'public'));
  const out: Record<string, unknown[]> = {};
  for (const table of tables) {
    const order = sql.join(table.columns.map((_, i) => sql.lit(i + 1)));
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table.name)} order by ${order}`.execute(storage.db);
    out[table.name] = rows;
  }
  return out;
}

async function withStorage<T>(options: { dataDir: string; databaseUrl: string }, work: (storage: Storage) => Promise<T>): Promise<T> {
  const storage = await openStorage(options);
  try {
    return await work(storage);
  } finally {
    await storage.close();
  }
}

const sqliteFile = (dir: string): string => join(dir, 'vehicle-lookup.sqlite');

describe('migrate-store to PostgreSQL', () => {
  let source: SourceStore;
  let target: { url: string; drop: () => Promise<void> };
  let scratch: string;

  beforeEach(async (ctx) => {
    if (!(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'vehicle-lookup-migrate-'));
    scratch = mkdtempSync(join(tmpdir(), 'vehicle-lookup-migrate-pg-'));
    source = { dir, env: { DATA_DIR: dir, LOG_LEVEL: 'silent' }, keys: await populate(dir) };
    target = await freshPostgresDatabase();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'skip') return;
    await target.drop();
    rmSync(source.dir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  const migrate = (...extra: string[]): Promise<CliRun> => cli(source.env, ['migrate-store', '--to', target.url, ...extra]);
  const targetApp = (): Promise<BuiltApp> => buildApp(loadConfig({ DATA_DIR: scratch, DATABASE_URL: target.url, LOG_LEVEL: 'silent' }));
  const targetCounts = (): Promise<Record<string, number>> =>
    withStorage({ dataDir: scratch, databaseUrl: target.url }, async (storage) => {
      const all = await dump(storage);
      return Object.fromEntries(Object.entries(all).map(([table, rows]) => [table, rows.length]));
    });

  it('copies every table row for row, ids and order included, in pages smaller than the tables', async () => {
    const run = await migrate('--batch-size', '2');
    expect(run.code, run.err).toBe(0);
    const [from, to] = [
      await withStorage({ dataDir: source.dir, databaseUrl: sqliteFile(source.dir) }, dump),
      await withStorage({ dataDir: scratch, databaseUrl: target.url }, dump),
    ];
    expect(Object.keys(to).sort()).toEqual(Object.keys(from).sort());
    for (const table of Object.keys(from)) expect(to[table], table).toEqual(from[table]);
    // The ledger comes over in id order with its ids, and more than one page of it.
    const ledger = to.ledger as Array<{ id: number }>;
    expect(ledger.length).toBeGreaterThan(4);
    expect(ledger.map((r) => r.id)).toEqual(ledger.map((_, i) => i + 1));
  });

  it('fills every table of the schema in its fixture, so a new table cannot go uncopied unnoticed', async () => {
    const run = await migrate('--json');
    expect(run.code, run.err).toBe(0);
    const { tables } = json(run) as MigrateJson;
    const schemaTables = await withStorage({ dataDir: scratch, databaseUrl: target.url }, async (s) => Object.keys(await dump(s)));
    expect(Object.keys(tables).sort(), 'the command copies exactly the tables of the schema').toEqual([...schemaTables].sort());
    expect(Object.keys(tables).sort(), 'a migration added a table: give it rows in populate() and add it to FIXTURE_TABLES').toEqual(FIXTURE_TABLES);
    for (const [table, rows] of Object.entries(tables)) expect(rows, `the fixture leaves ${table} empty`).toBeGreaterThan(0);
  });

  it('serves the copied store on PostgreSQL: same keys and balances, new debits and accounts get ids past the copied ones', async () => {
    const before = await withStorage({ dataDir: source.dir, databaseUrl: sqliteFile(source.dir) }, async (s) => ({
      balances: await s.db.selectFrom('accounts').select(['username', 'credits']).orderBy('id').execute(),
      maxLedger: (await s.db.selectFrom('ledger').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow()).id,
      maxAccount: (await s.db.selectFrom('accounts').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow()).id,
    }));
    expect(before.balances).toEqual([
      { username: 'alice', credits: 6 },
      { username: 'bob', credits: 23 },
      { username: 'carol', credits: 3 },
      { username: 'dave', credits: 1 },
    ]);
    const run = await migrate('--json');
    expect(run.code, run.err).toBe(0);

    const built = await targetApp();
    try {
      const s = built.services;
      expect(s.storage.engine).toBe('postgres');
      for (const { username, credits } of before.balances) {
        expect((await s.accounts.show(username)).credits).toBe(credits);
        const ledger = await s.accounts.usage(username);
        expect(ledger.reduce((sum, r) => sum + r.delta, 0), `${username}: balance equals its ledger`).toBe(credits);
      }

      // The API key hashes came over: the keys printed on the SQLite store still authenticate.
      const answer = await inject(built, 'CheckFrance/EG258MA', 'alice', source.keys.alice ?? '');
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.headers['x-credits-remaining']).toBe('5');
      const [newest] = (await s.accounts.usage('alice')).slice(-1);
      expect(newest).toMatchObject({ kind: 'debit', delta: -1, balanceAfter: 5, operation: 'CheckFrance' });
      const newRows = await s.storage.db.selectFrom('ledger').select(['id', 'account_id']).where('id', '>', before.maxLedger).execute();
      expect(newRows).toHaveLength(1);
      expect(newRows[0]?.id).toBe(before.maxLedger + 1);

      // Records, Euro NCAP ratings, test plates and flags came over too.
      const ncap = await inject(built, 'CheckEuroNCap/Volvo/XC', 'bob', source.keys.bob ?? '');
      expect(ncap.statusCode, ncap.body).toBe(200);
      expect(JSON.parse(ncap.body)).toHaveLength(2);
      expect((await inject(built, 'CheckUSA/TEST1/CA', 'bob', source.keys.bob ?? '')).headers['x-credits-charged']).toBe('0');
      // And the idempotency keys: a retry of the keyed lookup is still free on the new store.
      expect((await inject(built, 'CheckFrance/EG258MA', 'alice', source.keys.alice ?? '', 'fixture-key-1')).headers['idempotent-replayed']).toBe('true');
      const disabled = await inject(built, 'CheckFrance/EG258MA', 'carol', source.keys.carol ?? '');
      expect(disabled.statusCode).toBe(500);
      expect(disabled.body).toContain('disabled');
      expect((await s.accounts.show('dave')).requireApiKey).toBe(true);
      expect((await s.accounts.show('alice')).rateLimits).toEqual({ perSecond: 50, perDay: 0 });

      // A new account and its top-up row take the next ids instead of colliding.
      const lastLedger = (await s.storage.db.selectFrom('ledger').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow()).id;
      // alice's and bob's charged lookups above, then the free rows of bob's test plate and alice's replay
      expect(lastLedger).toBe(before.maxLedger + 4);
      const { apiKey } = await s.accounts.create('erin', 4);
      const erin = await s.storage.db.selectFrom('accounts').select('id').where('username', '=', 'erin').executeTakeFirstOrThrow();
      expect(erin.id).toBe(before.maxAccount + 1);
      const erinRows = await s.storage.db.selectFrom('ledger').select('id').where('account_id', '=', erin.id).execute();
      expect(erinRows.map((r) => r.id)).toEqual([lastLedger + 1]);
      expect((await inject(built, 'CheckUSA/H84JAE/NJ', 'erin', apiKey)).headers['x-credits-remaining']).toBe('3');
    } finally {
      await built.app.close();
    }
  });

  it('prints a --json summary of tables, accounts, credits and next ids', async () => {
    const run = await migrate('--json');
    expect(run.code, run.err).toBe(0);
    const summary = json(run) as MigrateJson;
    expect(Object.keys(summary).sort()).toEqual(['accounts', 'credits', 'ledgerRows', 'nextIds', 'seconds', 'source', 'sourceChangedDuringCopy', 'tables', 'target', 'verified']);
    expect(summary).toMatchObject({
      source: `sqlite:${sqliteFile(source.dir)}`,
      accounts: 4,
      credits: 6 + 23 + 3 + 1,
      ledgerRows: summary.tables.ledger,
      verified: true,
      sourceChangedDuringCopy: false,
    });
    expect(summary.tables).toMatchObject({ accounts: 4, records: 3, operation_records: 1, ncap_ratings: 2, test_plates: 1, upstream_cache: 1 });
    const next = (table: string): number => (summary.tables[table] ?? 0) + 1;
    expect(summary.nextIds).toEqual({
      'accounts.id': 5,
      'api_keys.id': next('api_keys'),
      'audit_log.id': next('audit_log'),
      'idempotency_results.id': 2,
      'imports.id': 2,
      'ledger.id': next('ledger'),
      'operator_tokens.id': next('operator_tokens'),
      'users.id': next('users'),
      'webhook_deliveries.id': 2,
      'webhook_endpoints.id': 2,
    });
    expect(summary.target).toBe(new URL(target.url).toString());
    expect(summary.seconds).toBeGreaterThanOrEqual(0);
    expect(run.err).toBe('');
  });

  it('prints a human summary naming every table and the next ids', async () => {
    const run = await migrate();
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/^Copied sqlite:.* to postgres:\/\/.* and verified the copy:/);
    for (const table of FIXTURE_TABLES) expect(run.out).toMatch(new RegExp(`^  ${table} +\\d+ rows?$`, 'm'));
    expect(run.out).toContain('4 accounts holding 33 credits in all; on both sides each balance equals the sum of its account\'s ledger rows (');
    expect(run.out).toMatch(/Next ids: accounts\.id 5, api_keys\.id \d+, audit_log\.id \d+, idempotency_results\.id 2, imports\.id 2, ledger\.id \d+, operator_tokens\.id \d+, users\.id \d+, webhook_deliveries\.id 2, webhook_endpoints\.id 2\./);
  });

  it('refuses a target that already holds data and leaves it as it was', async () => {
    expect((await migrate()).code).toBe(0);
    const after = await targetCounts();
    const again = await migrate('--json');
    expect(again.code).toBe(1);
    expect(again.out).toBe('');
    expect(again.err).toMatch(/^vehicle-lookup: migrate-store refused: the target database is not empty \(accounts: 4 rows, .*ledger: \d+ rows.*\); migrate-store only copies into an empty database/);
    expect(await targetCounts()).toEqual(after);
  });

  it('refuses a target where a server already created an account, copying nothing', async () => {
    const built = await targetApp();
    try {
      await built.services.accounts.create('demo', 100);
    } finally {
      await built.app.close();
    }
    const run = await migrate();
    expect(run.code).toBe(1);
    expect(run.err).toContain('the target database is not empty (accounts: 1 row, audit_log: 1 row, api_keys: 1 row, ledger: 1 row)');
    expect(await targetCounts()).toMatchObject({ accounts: 1, ledger: 1, records: 0, ncap_ratings: 0, test_plates: 0 });
  });

  it('refuses a source whose balances do not match its ledger, copying nothing', async () => {
    const db = new SQLite(sqliteFile(source.dir));
    db.prepare("update accounts set credits = credits + 5 where username = 'bob'").run();
    db.close();
    const run = await migrate();
    expect(run.code).toBe(1);
    expect(run.err).toContain("the source store's balances do not match its ledger for 1 account(s) (bob: balance 28, ledger 23)");
    expect(await targetCounts()).toMatchObject({ accounts: 0, ledger: 0, records: 0 });
  });

  it('reports a write to the source made during the copy, and copies the snapshot taken before it', async () => {
    const from = await openStorage({ dataDir: source.dir, databaseUrl: sqliteFile(source.dir) });
    const to = await openStorage({ dataDir: scratch, databaseUrl: target.url, poolSize: 2 });
    const writer = new SQLite(sqliteFile(source.dir));
    try {
      let wrote = false;
      const summary = await copyStore(from, to, {
        batchRows: 1,
        onProgress: () => {
          if (wrote) return;
          wrote = true;
          writer.prepare("insert into test_plates (operation, lookup_key, created_at) values ('CheckFrance', 'LATE1', '2026-01-01T00:00:00.000Z')").run();
        },
      });
      expect(wrote).toBe(true);
      expect(summary.sourceChangedDuringCopy).toBe(true);
      expect(summary.tables.find((t) => t.table === 'test_plates')?.rows).toBe(1);
    } finally {
      writer.close();
      await from.close();
      await to.close();
    }
  });
});

describe('migrate-store arguments', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'vehicle-lookup-migrate-args-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('requires --to, a PostgreSQL URL', async () => {
    const missing = await cli({ DATA_DIR: dir }, ['migrate-store']);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("required option '--to <url>' not specified");
    const sqliteTarget = await cli({ DATA_DIR: dir }, ['migrate-store', '--to', 'sqlite:/tmp/x.sqlite']);
    expect(sqliteTarget.code).toBe(1);
    expect(sqliteTarget.err).toBe('vehicle-lookup: --to must be a postgres:// or postgresql:// URL (got "sqlite:/tmp/x.sqlite")');
  });

  it('refuses a source that does not exist instead of copying a new empty store', async () => {
    const run = await cli({ DATA_DIR: dir }, ['migrate-store', '--to', 'postgres://nobody@127.0.0.1:1/none', '--from', join(dir, 'missing.sqlite')]);
    expect(run.code).toBe(1);
    expect(run.err).toBe(`vehicle-lookup: no SQLite store at ${join(dir, 'missing.sqlite')}`);
    const defaultStore = await cli({ DATA_DIR: dir }, ['migrate-store', '--to', 'postgres://nobody@127.0.0.1:1/none']);
    expect(defaultStore.err).toBe(`vehicle-lookup: no SQLite store at ${sqliteFile(dir)}`);
  });

  it('refuses a PostgreSQL source', async () => {
    const viaFlag = await cli({ DATA_DIR: dir }, ['migrate-store', '--to', 'postgres://a@h/b', '--from', 'postgres://a@h/c']);
    expect(viaFlag.err).toContain('--from must be an embedded SQLite store');
    const viaEnv = await cli({ DATA_DIR: dir, DATABASE_URL: 'postgres://a@h/c' }, ['migrate-store', '--to', 'postgres://a@h/b']);
    expect(viaEnv.code).toBe(1);
    expect(viaEnv.err).toContain('DATABASE_URL names a PostgreSQL database; name the SQLite store to copy with --from');
  });

  it('takes --batch-size as a positive whole number', async () => {
    const run = await cli({ DATA_DIR: dir }, ['migrate-store', '--to', 'postgres://a@h/b', '--batch-size', '0']);
    expect(run.code).toBe(1);
    expect(run.err).toContain('--batch-size must be at least 1');
  });
});
