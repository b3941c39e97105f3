import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FakeDvla } from '../fakes/fake-dvla.js';
import type { FakeDvsaMot } from '../fakes/fake-dvsa-mot.js';
import { join } from 'node:path';
import { ENGINES, freshPostgresDatabase, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, tempDir, type TestApp } from '../helpers/test-app.js';
import { fakeEnv, SECRETS, startDvla, startDvsa } from './harness.js';

/**
 * End to end through the JSON interface on a real port: the app reads its provider settings from
 * the environment (stubbed here to point at the fakes), and credits move only for found answers.
 */

let dvla: FakeDvla;
let dvsa: FakeDvsaMot;
/** The app the lookups go to: fakeEnv's timeouts, far above any answer of the local fakes however busy the machine. */
let t: TestApp;
let base: string;
let auth: string;
/** An app of its own for the plate that never answers (ER19HNG): its sources give up at 300 ms. */
let impatient: { readonly t: TestApp; readonly base: string; readonly auth: string };

/**
 * Builds an app whose providers read `env`: services.ts reads them from process.env at build time,
 * while `config` (DATABASE_URL...) goes to the app's own configuration.
 */
async function appWith(env: Record<string, string>, config: Record<string, string> = {}): Promise<TestApp> {
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  try {
    return await createTestApp(config);
  } finally {
    vi.unstubAllEnvs();
  }
}

async function get(path: string, on: { readonly base: string; readonly auth: string } = { base, auth }): Promise<{ status: number; text: string; charged: string | null }> {
  const res = await fetch(`${on.base}${path}`, { headers: { authorization: on.auth } });
  return { status: res.status, text: await res.text(), charged: res.headers.get('x-credits-charged') };
}

async function balance(app: TestApp = t): Promise<number> {
  return (await app.services.accounts.show('alice')).credits;
}

beforeAll(async () => {
  dvla = await startDvla();
  dvsa = await startDvsa();
  // Breakers out of the way here; the breaker has its own test below.
  const breakers = { DVLA_BREAKER_FAILURES: '100', DVSA_BREAKER_FAILURES: '100' };
  t = await appWith(fakeEnv({ dvla, dvsa }, breakers));
  auth = t.basic('alice', await t.account('alice', 20));
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const slow = await appWith(fakeEnv({ dvla, dvsa }, { ...breakers, DVLA_TIMEOUT_MS: '300', DVSA_TIMEOUT_MS: '300' }));
  impatient = { t: slow, auth: slow.basic('alice', await slow.account('alice', 20)), base: await slow.app.listen({ port: 0, host: '127.0.0.1' }) };
});
afterAll(async () => {
  await t.close();
  await impatient.t.close();
  await dvla.close();
  await dvsa.close();
});

describe('upstream lookups and credits, through the JSON interface', () => {
  it('charges one credit for a UK vehicle found upstream, and again when the same lookup is answered from the cache', async () => {
    const before = await balance();
    const first = await get('/api/json.aspx/Check/AA19AAA');
    expect(first.status).toBe(200);
    expect(first.charged).toBe('1');
    expect(JSON.parse(first.text)).toMatchObject({ Description: '2019 Ford Focus, 1596CC Petrol', CarModel: { CurrentTextValue: 'FOCUS' }, ImageUrl: expect.any(String) as unknown });
    const calls = dvla.calls;
    const second = await get('/api/json.aspx/Check/AA19AAA');
    expect(second.status).toBe(200);
    expect(second.charged).toBe('1');
    expect(dvla.calls).toBe(calls);
    expect(await balance()).toBe(before - 2);
  });

  it('answers UKMOT from the MOT API with the DVLA tax date, for one credit', async () => {
    const before = await balance();
    const res = await get('/api/json.aspx/UKMOT/AA19DSL/Volkswagen');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ Tests: [{ Result: 'Pass', Odometer: '120500' }], taxDate: '01 Sep 2026', ExtendedInformation: { Model: 'GOLF' } });
    expect(await balance()).toBe(before - 1);
  });

  it('charges nothing when the upstream says the vehicle does not exist', async () => {
    const before = await balance();
    const check = await get('/api/json.aspx/Check/ER19NFD');
    expect(check).toMatchObject({ status: 500, text: 'UK Lookup failed' });
    const mot = await get('/api/json.aspx/UKMOT/ER19NFD');
    expect(mot).toMatchObject({ status: 500, text: 'UK MOT Lookup failed' });
    expect(await get('/api/json.aspx/Check/ER19BAD')).toMatchObject({ status: 500, text: expect.stringMatching(/^UK Lookup failed/) as unknown });
    expect(await balance()).toBe(before);
  });

  it('charges nothing for any upstream failure: 500, 503, 429, a hanging upstream, a refused token', async () => {
    const before = await balance();
    const rows = (await t.services.accounts.usage('alice')).length;
    for (const plate of ['ER19ERR', 'ER19MNT', 'ER19THR']) {
      const res = await get(`/api/json.aspx/Check/${plate}`);
      expect(res, plate).toMatchObject({ status: 500, text: 'UK lookup is temporarily unavailable, please try again later' });
      expect(res.charged).toBeNull();
    }
    expect(await get('/api/json.aspx/Check/ER19HNG', impatient)).toMatchObject({ status: 500, text: 'UK lookup is temporarily unavailable, please try again later', charged: null });
    expect(await balance(impatient.t)).toBe(20);
    expect(await get('/api/json.aspx/UKMOT/ER19ERR')).toMatchObject({ status: 500, text: 'UK MOT lookup is temporarily unavailable, please try again later' });
    dvsa.revokeTokens();
    dvsa.server.script({ status: 401, json: { error: 'invalid_client' } }, { status: 401, json: { error: 'invalid_client' } });
    expect(await get('/api/json.aspx/UKMOT/L2WPS')).toMatchObject({ status: 500, text: 'UK MOT lookup is temporarily unavailable, please try again later' });
    expect(await balance()).toBe(before);
    expect((await t.services.accounts.usage('alice')).length).toBe(rows);
  });

  it('asks the local store first: an imported record is served without calling DVLA', async () => {
    await t.importRecords([{ operation: 'Check', key: { RegistrationNumber: 'AA19MOT' }, vehicle: { Description: 'Imported', MakeDescription: 'LOCAL' } }]);
    const calls = dvla.calls;
    const res = await get('/api/json.aspx/Check/AA19MOT');
    expect(JSON.parse(res.text)).toMatchObject({ Description: 'Imported' });
    expect(dvla.calls).toBe(calls);
  });

  it('shows the providers in /readyz and their requests in /metrics, labelled by provider', async () => {
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({
      status: 'ready',
      providers: {
        dvla: { enabled: true, status: 'up', breaker: 'closed', requests: { total: expect.any(Number) as unknown }, lastLatencyMs: expect.any(Number) as unknown },
        'dvsa-mot': { enabled: true, status: 'up' },
      },
    });
    const metrics = (await t.app.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(/vehicle_lookup_upstream_requests_total\{provider="dvla",endpoint="lookup",outcome="200"\} \d+/);
    // ER19ERR: Check and UKMOT both asked DVLA (UKMOT for the tax date), each with one retry.
    expect(metrics).toMatch(/vehicle_lookup_upstream_requests_total\{provider="dvla",endpoint="lookup",outcome="500"\} 4/);
    // ER19HNG (asked of the impatient app): DVLA's lookup timed out, and once more on its retry. (DVLA,
    // whose key needs no token: a DVSA token request shares the 300 ms and could be the one cut off.)
    const timedOut = (await impatient.t.app.inject({ url: '/metrics' })).body;
    expect(timedOut).toMatch(/vehicle_lookup_upstream_requests_total\{provider="dvla",endpoint="lookup",outcome="timeout"\} 2/);
    expect(metrics).toMatch(/vehicle_lookup_upstream_requests_total\{provider="dvsa-mot",endpoint="token",outcome="200"\} \d+/);
    expect(metrics).toMatch(/vehicle_lookup_upstream_lookups_total\{provider="dvla",answer="found",via="cache"\} \d+/);
    expect(metrics).toMatch(/vehicle_lookup_upstream_retries_total\{provider="dvla",reason="5xx"\} \d+/);
    expect(metrics).toMatch(/vehicle_lookup_upstream_request_duration_seconds_count\{provider="dvla",endpoint="lookup"\} \d+/);
    expect(metrics).toMatch(/vehicle_lookup_upstream_circuit_state\{provider="dvla"\} 0/);
    expect(ready.body + metrics).not.toContain(SECRETS.dvlaKey);
  });

  it('answers CheckMotorBikeUK from DVLA with the DVSA model, a motorcycle ImageUrl, for one credit', async () => {
    const before = await balance();
    const res = await get('/api/json.aspx/CheckMotorBikeUK/MC19BKE');
    expect(res.status, res.text).toBe(200);
    expect(res.charged).toBe('1');
    const body = JSON.parse(res.text) as Record<string, unknown>;
    expect(body).toMatchObject({
      Description: '2019 Triumph Street Triple Rs, 765CC Petrol',
      RegistrationYear: '2019',
      CarMake: { CurrentTextValue: 'TRIUMPH' },
      CarModel: { CurrentTextValue: 'STREET TRIPLE RS' },
      EngineSize: { CurrentTextValue: '765' },
      TypeApproval: 'L3e',
      Wheelplan: '2 WHEELS',
    });
    // The suffix inside the encoded text, as the original writes it (issue 24 "Fidelity" 2).
    expect(body.ImageUrl).toBe(`${base}/image.aspx/@${Buffer.from('TRIUMPH STREET TRIPLE RS|motorcycle').toString('base64')}`);
    // The ImageUrl handed out serves a picture.
    const image = await fetch(String(body.ImageUrl));
    expect(image.status).toBe(200);
    expect(await image.text()).toContain('STREET TRIPLE RS');
    expect(await balance()).toBe(before - 1);
  });

  it('charges nothing when DVLA fails or does not know a CheckMotorBikeUK plate, and says so as a motorbike lookup', async () => {
    const before = await balance();
    const rows = (await t.services.accounts.usage('alice')).length;
    for (const plate of ['ER19ERR', 'ER19MNT']) {
      const res = await get(`/api/json.aspx/CheckMotorBikeUK/${plate}`);
      expect(res, plate).toMatchObject({ status: 500, text: 'UK motorbike lookup is temporarily unavailable, please try again later', charged: null });
    }
    expect(await get('/api/json.aspx/CheckMotorBikeUK/ER19HNG', impatient)).toMatchObject({ status: 500, text: 'UK motorbike lookup is temporarily unavailable, please try again later', charged: null });
    expect(await balance(impatient.t)).toBe(20);
    expect(await get('/api/json.aspx/CheckMotorBikeUK/ER19NFD')).toMatchObject({ status: 500, text: 'UK motorbike Lookup failed', charged: null });
    expect(await balance()).toBe(before);
    expect((await t.services.accounts.usage('alice')).length).toBe(rows);
  });
});

describe('an upstream that is down', () => {
  it('opens the circuit, shows it in /readyz and /metrics while the instance stays ready, and still charges nothing', async () => {
    const app = await appWith(fakeEnv({ dvla }, { DVLA_BREAKER_FAILURES: '2', DVLA_BREAKER_OPEN_S: '600' }));
    try {
      const key = await app.account('bob', 5);
      const headers = { authorization: app.basic('bob', key) };
      const before = dvla.calls;
      for (const plate of ['ER19ERR', 'ER19MNT', 'AA19AAA']) {
        const res = await app.app.inject({ url: `/api/json.aspx/Check/${plate}`, headers });
        expect(res.statusCode).toBe(500);
        expect(res.body).toBe('UK lookup is temporarily unavailable, please try again later');
      }
      // Two failed lookups (two requests each); the third was not sent.
      expect(dvla.calls - before).toBe(4);
      expect((await app.services.accounts.show('bob')).credits).toBe(5);
      const ready = await app.app.inject({ url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({
        status: 'ready',
        providers: {
          dvla: { status: 'down', breaker: 'open', consecutiveFailures: 2, retryAt: expect.any(String) as unknown, lastFailure: { kind: 'server-error' } },
          'dvsa-mot': { enabled: false, status: 'disabled', reason: expect.stringMatching(/DVSA_CLIENT_ID/) as unknown },
        },
      });
      const metrics = (await app.app.inject({ url: '/metrics' })).body;
      expect(metrics).toMatch(/vehicle_lookup_upstream_circuit_state\{provider="dvla"\} 2/);
      expect(metrics).toMatch(/vehicle_lookup_upstream_lookups_total\{provider="dvla",answer="unavailable",via="circuit_open"\} 1/);
      expect(metrics).toMatch(/vehicle_lookup_lookups_total\{operation="Check",interface="json",outcome="upstream_unavailable"\} 3/);
    } finally {
      await app.close();
    }
  });
});

describe.each(ENGINES)('the answer cache on %s', (engine) => {
  it('is shared by two instances on one store: the second answers from the cache, and charges its price', async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    const dir = tempDir();
    const database = engine === 'postgres' ? await freshPostgresDatabase() : undefined;
    const store = { DATABASE_URL: database?.url ?? join(dir.path, 'shared.sqlite') };
    const first = await appWith(fakeEnv({ dvla }), store);
    const second = await appWith(fakeEnv({ dvla }), store);
    try {
      const key = await first.account('carol', 3);
      const headers = { authorization: first.basic('carol', key) };
      const before = dvla.callsFor('AA19AMP');
      expect((await first.app.inject({ url: '/api/json.aspx/Check/AA19AMP', headers })).statusCode).toBe(200);
      const cached = await second.app.inject({ url: '/api/json.aspx/Check/AA19AMP', headers });
      expect(cached.statusCode).toBe(200);
      expect(cached.headers['x-credits-charged']).toBe('1');
      expect(cached.json()).toMatchObject({ MakeDescription: 'BMW' });
      expect(dvla.callsFor('AA19AMP') - before).toBe(1);
      expect((await second.services.accounts.show('carol')).credits).toBe(1);
    } finally {
      await first.close();
      await second.close();
      await database?.drop();
      dir.remove();
    }
  });
});
