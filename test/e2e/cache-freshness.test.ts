import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../src/services.js';
import { systemClock } from '../../src/shared/clock.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';

const VEHICLE = { Description: 'RENAULT CLIO', CarMake: { CurrentTextValue: 'RENAULT' }, CarModel: { CurrentTextValue: 'CLIO' } };

/**
 * The lookup caches share one read of SQLite's change counter per turn of the event loop
 * (ChangeSnapshot). A change committed through another connection of this process must still show
 * from the very next lookup, with no turn of the event loop in between (inject runs on promises).
 */
describe('caches on SQLite and a second connection in the same process', () => {
  let t: TestApp;
  let other: { storage: Storage; services: Services };
  let key: string;

  beforeEach(async () => {
    t = await createTestApp();
    await t.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE }]);
    key = await t.account('fresh', 10);
    const storage = await openStorage({ dataDir: t.dataDir, databaseUrl: `sqlite:${join(t.dataDir, 'vehicle-lookup.sqlite')}` });
    other = { storage, services: createServices(storage, { clock: systemClock, requireApiKeyEverywhere: false }) };
  });
  afterEach(async () => {
    await other.storage.close();
    await t.close();
  });

  const lookup = (authorization = t.basic('fresh', key), plate = 'AB123CD') =>
    t.app.inject({ method: 'GET', url: `/api/json.aspx/CheckFrance/${plate}`, headers: { authorization } });

  /**
   * A lookup that loads the caches and reads the counter without waiting for a debit (whose
   * group commit would end the turn): the account is cached, the plate is not found.
   */
  async function warm(): Promise<void> {
    const res = await lookup(t.basic('fresh', key), 'ZZ999ZZ');
    expect(res.body).toMatch(/Lookup failed/);
  }

  it('refuses a disabled account from the next lookup', async () => {
    expect((await lookup()).statusCode).toBe(200);
    await warm();
    await other.services.accounts.setDisabled('fresh', true);
    const refused = await lookup();
    expect(refused.statusCode).toBe(500);
    expect(refused.body).toMatch(/disabled/);
  });

  it('refuses the old key and accepts the new one from the next lookup after a rotation', async () => {
    expect((await lookup()).statusCode).toBe(200);
    await warm();
    const rotated = await other.services.accounts.rotateKey('fresh');
    expect((await lookup()).statusCode).toBe(401);
    expect((await lookup(t.basic('fresh', rotated))).statusCode).toBe(200);
  });

  it('answers a plate made a free test plate without charging from the next lookup', async () => {
    expect((await lookup()).headers['x-credits-charged']).toBe('1');
    await warm();
    await other.services.testPlates.add('CheckFrance', 'AB123CD', SYSTEM_ACTOR);
    const free = await lookup();
    expect(free.statusCode).toBe(200);
    expect(free.headers['x-credits-charged']).toBe('0');
    expect(await t.services.accounts.balance('fresh')).toBe(9);
  });
});
