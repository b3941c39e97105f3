import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BuiltApp } from '../../src/app.js';
import { enginesToTest } from '../helpers/engines.js';
import { cli } from '../cli/cli-harness.js';
import { answerText, fixtureOf, UK_MINIMAL_VEHICLE_JSON, UK_VEHICLE_JSON } from '../fakes/fake-regcheck.js';
import { replayWorld } from './gateway-harness.js';

/**
 * Record and replay keep each operation's answer (issue 24): Check and CheckUKMinimal share the
 * `Check` dataset, and the original answers one plate differently on each (every member, or six
 * of them). A store that imports the recording answers each operation with the bytes the original
 * sent for that operation, whichever is asked first; records imported from elsewhere still serve
 * every operation of their dataset.
 */
const PLATE = 'LV04XYZ';
const requests = (username: string) =>
  [
    ['Check over GET', `/api/reg.asmx/Check?RegistrationNumber=${PLATE}&username=${username}`],
    ['CheckUKMinimal over GET', `/api/bespokeapi.asmx/CheckUKMinimal?regNumber=${PLATE}&username=${username}`],
    ['Check over JSON', `/api/json.aspx/Check/${PLATE}`],
    ['CheckUKMinimal over JSON', `/api/json.aspx/CheckUKMinimal/${PLATE}`],
  ] as const;

describe.each(await enginesToTest())('replaying two operations of one dataset on %s', (engine) => {
  const world = replayWorld(engine);
  const store = () => world.store();

  async function ask(app: BuiltApp, key: string): Promise<Map<string, string>> {
    const authorization = `Basic ${Buffer.from(`alice:${key}`).toString('base64')}`;
    const bodies = new Map<string, string>();
    for (const [name, url] of requests('alice')) {
      const res = await app.app.inject({ url, headers: { authorization } });
      expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
      bodies.set(name, res.body);
    }
    return bodies;
  }

  it('answers Check and CheckUKMinimal of one plate each with its own recorded bytes, after `import` on a fresh store', async () => {
    const recordFile = join(world.dir, 'regcheck.jsonl');
    const gateway = await world.app(await store(), { REGCHECK_USERNAME: 'op-user', REGCHECK_BASE_URL: world.fake.baseUrl, REGCHECK_RECORD_FILE: recordFile });
    const live = await ask(gateway, (await gateway.services.accounts.create('alice', 100)).apiKey);
    // What the original sent, per operation: the two differ, and each is what the gateway served.
    expect(live.get('Check over GET')).toBe(answerText(fixtureOf('Check')));
    expect(live.get('CheckUKMinimal over GET')).toBe(answerText(fixtureOf('CheckUKMinimal')));
    expect(live.get('Check over JSON')).toBe(UK_VEHICLE_JSON);
    expect(live.get('CheckUKMinimal over JSON')).toBe(UK_MINIMAL_VEHICLE_JSON);
    const recorded = readFileSync(recordFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { operation: string });
    expect(recorded.map((l) => l.operation).sort()).toEqual(['Check', 'CheckUKMinimal']);

    const offlineStore = await store();
    const imported = await cli({ LOG_LEVEL: 'silent', ...offlineStore.env }, ['import', recordFile]);
    expect(imported.code, imported.out + imported.err).toBe(0);
    const offline = await world.app(offlineStore, {});
    expect(offline.regcheck).toBeUndefined();
    const calls = world.fake.calls();
    const key = (await offline.services.accounts.create('alice', 100)).apiKey;
    // Twice: the first pass reads the store, the second the record cache, each in both orders of
    // the operations (Check before CheckUKMinimal on GET, and JSON after GET).
    for (let pass = 0; pass < 2; pass++) {
      const replayed = await ask(offline, key);
      for (const [name] of requests('alice')) expect(replayed.get(name), `${name}, pass ${pass + 1}`).toBe(live.get(name));
    }
    expect(world.fake.calls()).toBe(calls);

    // Exported again under the operation each answer came from.
    const exported = await cli({ LOG_LEVEL: 'silent', ...offlineStore.env }, ['export', '--source', 'regcheck']);
    expect(exported.code, exported.err).toBe(0);
    const lines = exported.out.split('\n').map((l) => JSON.parse(l) as { operation: string; key: Record<string, string>; vehicle: { vehicleJson: string } });
    expect(lines.map((l) => [l.operation, l.key, l.vehicle.vehicleJson]).sort()).toEqual([
      ['Check', { RegistrationNumber: PLATE }, UK_VEHICLE_JSON],
      ['CheckUKMinimal', { regNumber: PLATE }, UK_MINIMAL_VEHICLE_JSON],
    ]);
  });

  it('still serves a record imported from elsewhere to every operation of its dataset, after an answer of the original kept for one of them', async () => {
    const offlineStore = await store();
    const file = join(world.dir, 'ours.jsonl');
    const ours = (plate: string) => ({ operation: 'Check', key: { RegistrationNumber: plate }, vehicle: { Description: 'OURS', RegistrationYear: '2010', CarMake: { CurrentTextValue: 'FORD' }, EngineSize: { CurrentTextValue: '1596' } } });
    // PLATE also has the original's CheckUKMinimal answer, imported beside our own Check record.
    const recorded = { operation: 'CheckUKMinimal', key: { regNumber: PLATE }, vehicle: { vehicleJson: UK_MINIMAL_VEHICLE_JSON, vehicleData: { Description: 'ROVER 75 CLUB SE' } }, source: 'regcheck', fetchedAt: '2026-11-27T13:05:09.120Z' };
    writeFileSync(file, [ours('AB12CDE'), ours(PLATE), recorded].map((l) => JSON.stringify(l)).join('\n') + '\n');
    expect((await cli({ LOG_LEVEL: 'silent', ...offlineStore.env }, ['import', file])).code).toBe(0);
    const offline = await world.app(offlineStore, {});
    const authorization = `Basic ${Buffer.from(`alice:${(await offline.services.accounts.create('alice', 100)).apiKey}`).toString('base64')}`;
    const get = async (url: string) => {
      const res = await offline.app.inject({ url, headers: { authorization } });
      expect(res.statusCode, res.body).toBe(200);
      return res;
    };
    // Ours alone: both operations serve it, CheckUKMinimal shaped by its own rule (its field subset).
    expect((await get('/api/json.aspx/Check/AB12CDE')).json()).toMatchObject({ Description: 'OURS', EngineSize: { CurrentTextValue: '1596' } });
    const minimal = (await get('/api/json.aspx/CheckUKMinimal/AB12CDE')).json<Record<string, unknown>>();
    expect(minimal).toMatchObject({ Description: 'OURS', CarMake: { CurrentTextValue: 'FORD' } });
    expect(minimal).not.toHaveProperty('EngineSize');
    // Both kinds for one plate: the operation with a kept answer serves it before the dataset's record; the other serves ours.
    for (let pass = 0; pass < 2; pass++) {
      expect((await get(`/api/json.aspx/CheckUKMinimal/${PLATE}`)).body).toBe(UK_MINIMAL_VEHICLE_JSON);
      expect((await get(`/api/json.aspx/Check/${PLATE}`)).json()).toMatchObject({ Description: 'OURS', EngineSize: { CurrentTextValue: '1596' } });
    }
  });
});
