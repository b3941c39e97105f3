import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InProcessThrottleCounters, LoginThrottle, RequestLimiter, type ThrottleCounters } from '../../src/users/login-throttle.js';
import { StoreThrottleCounters } from '../../src/users/store-throttle-counters.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { enginesToTest, freshPostgresDatabase, type TestEngine } from '../helpers/engines.js';
import { createTestApp, tempDir, type TestApp } from '../helpers/test-app.js';
import { ManualClock } from '../redis/redis-harness.js';
import { operator, PASSWORD } from './admin-harness.js';
import { openForm } from '../console/console-harness.js';

const LIMITS = { perUser: 5, perAddress: 20, windowMs: 15 * 60_000 };

describe('LoginThrottle counting in this process', () => {
  let clock: ManualClock;
  let throttle: LoginThrottle;

  beforeEach(() => {
    clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
    throttle = new LoginThrottle(new InProcessThrottleCounters(() => clock.now().getTime()), LIMITS);
  });

  it('refuses the 6th attempt on a user name after 5 failures, until the window ends', async () => {
    for (let i = 0; i < 5; i++) expect(await throttle.attempt('Root', '10.0.0.1')).toBe(0);
    // Whatever the address and the case of the name: the user's count is the user's.
    expect(await throttle.attempt('root', '10.0.0.2')).toBe(15 * 60);
    clock.advance(10 * 60_000);
    expect(await throttle.attempt('root', '10.0.0.3')).toBe(5 * 60);
    clock.advance(5 * 60_000);
    expect(await throttle.attempt('root', '10.0.0.3')).toBe(0);
  });

  it('forgets the user’s failures on a success and gives the address its attempt back', async () => {
    for (let i = 0; i < 4; i++) await throttle.attempt('root', '10.0.0.1');
    await throttle.succeeded('root', '10.0.0.1');
    for (let i = 0; i < 5; i++) expect(await throttle.attempt('root', '10.0.0.1')).toBe(0);
    expect(await throttle.attempt('root', '10.0.0.1')).toBeGreaterThan(0);
  });

  it('refuses an address after 20 attempts on any names, without counting them against the names it then tries', async () => {
    for (let i = 0; i < 20; i++) expect(await throttle.attempt(`user${i}`, '10.0.0.9')).toBe(0);
    for (let i = 0; i < 10; i++) expect(await throttle.attempt('victim', '10.0.0.9')).toBeGreaterThan(0);
    // The refused address did not lock the victim out for everyone else.
    expect(await throttle.attempt('victim', '10.0.0.10')).toBe(0);
  });

  it('counts attempts before their passwords are checked, so attempts sent at once get no more than the limit', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => throttle.attempt('root', '10.0.0.1')));
    expect(answers.filter((wait) => wait === 0)).toHaveLength(5);
  });
});

describe('RequestLimiter counting in this process', () => {
  it('allows 600 requests a minute per caller and surface, then answers the seconds left', async () => {
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
    const limiter = new RequestLimiter(new InProcessThrottleCounters(() => clock.now().getTime()), 3);
    for (let i = 0; i < 3; i++) expect(await limiter.take('admin', 'session-a')).toBe(0);
    clock.advance(20_000);
    expect(await limiter.take('admin', 'session-a')).toBe(40);
    expect(await limiter.take('console', 'session-a')).toBe(0);
    expect(await limiter.take('admin', 'session-b')).toBe(0);
    clock.advance(40_000);
    expect(await limiter.take('admin', 'session-a')).toBe(0);
  });

  it('never uses the caller’s session id or token as a key', async () => {
    const keys: string[] = [];
    const counters: ThrottleCounters = {
      add: (key) => {
        keys.push(key);
        return Promise.resolve({ count: 1, endsInMs: 60_000 });
      },
      subtract: () => Promise.resolve(),
      clear: () => Promise.resolve(),
    };
    await new RequestLimiter(counters, 600).take('admin', 'Bearer vlop_secret-token-value');
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^req:admin:[A-Za-z0-9_-]{22}$/);
    expect(keys[0]).not.toContain('secret');
  });
});

describe.each(await enginesToTest())('failed logins counted in the store on %s', (engine: TestEngine) => {
  let storage: Storage;
  let drop: () => Promise<void>;

  beforeEach(async () => {
    if (engine === 'postgres') {
      const database = await freshPostgresDatabase();
      storage = await openStorage({ dataDir: '', databaseUrl: database.url });
      drop = database.drop;
    } else {
      const dir = tempDir();
      storage = await openStorage({ dataDir: dir.path });
      drop = () => {
        dir.remove();
        return Promise.resolve();
      };
    }
  });
  afterEach(async () => {
    await storage.close();
    await drop();
  });

  it('counts in one window from the first attempt, starts again after it, and prunes ended windows', async () => {
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
    const counters = new StoreThrottleCounters(storage, clock);
    expect(await counters.add('login:u:root', 60_000)).toEqual({ count: 1, endsInMs: 60_000 });
    clock.advance(15_000);
    expect(await counters.add('login:u:root', 60_000)).toEqual({ count: 2, endsInMs: 45_000 });
    await counters.subtract('login:u:root');
    await counters.subtract('login:u:root');
    await counters.subtract('login:u:root');
    expect(await counters.add('login:u:root', 60_000)).toEqual({ count: 1, endsInMs: 45_000 });
    expect(await counters.add('login:a:10.0.0.1', 60_000)).toMatchObject({ count: 1 });
    clock.advance(45_000);
    expect(await counters.add('login:u:root', 60_000)).toEqual({ count: 1, endsInMs: 60_000 });
    await counters.clear('login:u:root');
    expect(await counters.add('login:u:root', 60_000)).toMatchObject({ count: 1 });
    // A minute and more later, the next count deletes the rows whose window has ended.
    clock.advance(120_000);
    await counters.add('login:u:other', 60_000);
    const rows = await storage.db.selectFrom('login_throttle').select('subject').execute();
    expect(rows.map((r) => r.subject)).toEqual(['login:u:other']);
  });

  it('never loses an attempt counted by several callers at once', async () => {
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
    const [a, b] = [new StoreThrottleCounters(storage, clock), new StoreThrottleCounters(storage, clock)];
    const counts = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).add('login:a:10.0.0.1', 60_000)));
    expect(counts.map((c) => c.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});

/** The 6th failed login is refused whichever instance it reaches, when both share one store. */
describe.each(await enginesToTest())('two instances on one %s store without Redis', (engine: TestEngine) => {
  let a: TestApp;
  let b: TestApp;
  let dir: { path: string; remove: () => void } | undefined;

  beforeEach(async () => {
    if (engine === 'postgres') {
      a = await createTestApp({ SEED_DEMO: 'false' }, undefined, 'postgres');
      b = await createTestApp({ SEED_DEMO: 'false', DATABASE_URL: a.config.databaseUrl ?? '' });
    } else {
      dir = tempDir();
      const shared = { SEED_DEMO: 'false', DATABASE_URL: `${dir.path}/shared.sqlite` };
      a = await createTestApp(shared);
      b = await createTestApp(shared);
    }
  });
  afterEach(async () => {
    await b.close();
    await a.close();
    dir?.remove();
  });

  it('refuses the 6th failed login across both, and the console and the API count together', async () => {
    await operator(a, 'root');
    const attempt = (app: TestApp, password: string, url = '/admin/api/login') => app.app.inject({ method: 'POST', url, payload: { username: 'root', password } });
    for (const app of [a, b, a, b]) expect((await attempt(app, 'wrong password!')).statusCode).toBe(401);
    // The console's login form is another door to the same count.
    const loginForm = await openForm(b, '/console/login');
    const viaConsole = await b.app.inject({ method: 'POST', url: '/console/login', headers: { cookie: loginForm.cookie }, payload: { username: 'root', password: 'wrong password!', _csrf: loginForm.csrf } });
    expect(viaConsole.statusCode).toBe(401);
    for (const app of [a, b]) {
      const refused = await attempt(app, PASSWORD);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ error: 'rate-limited' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(14 * 60);
    }
  });
});
