import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamCacheRepository } from '../../src/providers/upstream/upstream-cache.repository.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { ENGINES, freshPostgresDatabase, postgresAvailable } from '../helpers/engines.js';
import { tempDir } from '../helpers/test-app.js';

const T0 = new Date('2026-01-15T12:00:00.000Z');
const later = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

describe.each(ENGINES)('upstream answer cache on %s', (engine) => {
  // Two stores on one database: two instances of the service.
  let a: Storage;
  let b: Storage;
  let cleanup: () => Promise<void>;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    const dir = tempDir();
    if (engine === 'postgres') {
      const database = await freshPostgresDatabase();
      a = await openStorage({ dataDir: dir.path, databaseUrl: database.url, poolSize: 2 });
      b = await openStorage({ dataDir: dir.path, databaseUrl: database.url, poolSize: 2 });
      cleanup = async () => {
        await a.close();
        await b.close();
        await database.drop();
        dir.remove();
      };
    } else {
      const file = join(dir.path, 'shared.sqlite');
      a = await openStorage({ dataDir: dir.path, databaseUrl: file });
      b = await openStorage({ dataDir: dir.path, databaseUrl: file });
      cleanup = async () => {
        await a.close();
        await b.close();
        dir.remove();
      };
    }
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await cleanup();
  });

  it('keeps a found answer until it expires, and shares it with another instance', async () => {
    const payload = { registrationNumber: 'AA19AAA', make: 'FORD', nested: { list: [1, 'two', null] } };
    await new UpstreamCacheRepository(a.db).put('dvla', 'AA19AAA', { status: 'found', payload }, 60, T0);
    const other = new UpstreamCacheRepository(b.db);
    expect(await other.get('dvla', 'AA19AAA', later(59))).toEqual({ status: 'found', payload, fetchedAt: T0.toISOString() });
    expect(await other.get('dvla', 'AA19AAA', later(60))).toBeUndefined();
  });

  it('keeps not-found answers apart from found ones, by provider and key', async () => {
    const cache = new UpstreamCacheRepository(a.db);
    await cache.put('dvla', 'ER19NFD', { status: 'not-found' }, 30, T0);
    await cache.put('dvsa-mot', 'ER19NFD', { status: 'found', payload: { model: 'X' } }, 30, T0);
    expect(await cache.get('dvla', 'ER19NFD', T0)).toEqual({ status: 'not-found', fetchedAt: T0.toISOString() });
    expect(await cache.get('dvsa-mot', 'ER19NFD', T0)).toMatchObject({ status: 'found', payload: { model: 'X' } });
    expect(await cache.get('dvla', 'OTHER', T0)).toBeUndefined();
  });

  it('replaces an answer for the same provider and key (an upsert on both engines)', async () => {
    const cache = new UpstreamCacheRepository(a.db);
    await cache.put('dvla', 'AB12CDE', { status: 'not-found' }, 10, T0);
    await new UpstreamCacheRepository(b.db).put('dvla', 'AB12CDE', { status: 'found', payload: { make: 'FORD' } }, 100, later(5));
    expect(await cache.get('dvla', 'AB12CDE', later(50))).toEqual({ status: 'found', payload: { make: 'FORD' }, fetchedAt: later(5).toISOString() });
    const rows = await a.db.selectFrom('upstream_cache').selectAll().execute();
    expect(rows).toHaveLength(1);
  });

  it('purges expired answers of one provider or of all, and clears on request', async () => {
    const cache = new UpstreamCacheRepository(a.db);
    await cache.put('dvla', 'OLD', { status: 'not-found' }, 10, T0);
    await cache.put('dvla', 'NEW', { status: 'not-found' }, 1000, T0);
    await cache.put('dvsa-mot', 'OLD', { status: 'not-found' }, 10, T0);
    expect(await cache.purgeExpired(later(10), 'dvla')).toBe(1);
    expect(await cache.purgeExpired(later(10))).toBe(1);
    expect(await cache.get('dvla', 'NEW', later(10))).toBeDefined();
    expect(await cache.clear('dvla')).toBe(1);
    expect(await a.db.selectFrom('upstream_cache').selectAll().execute()).toEqual([]);
  });

  it('refuses a status other than found or not-found', async () => {
    await expect(
      a.db.insertInto('upstream_cache').values({ provider: 'x', lookup_key: 'y', status: 'maybe' as 'found', payload: null, fetched_at: T0.toISOString(), expires_at: T0.toISOString() }).execute(),
    ).rejects.toThrow();
  });
});
