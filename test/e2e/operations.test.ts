import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

describe.each(await enginesToTest())('operations on %s', (engine) => {
  let t: TestApp;
  let auth: string;

  beforeAll(async () => {
    t = await createTestApp({}, undefined, engine);
    await t.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: { Description: 'RENAULT CLIO' } }]);
    auth = t.basic('ops', await t.account('ops', 10));
  });
  afterAll(async () => t.close());

  describe('health, readiness and metrics', () => {
    it('answers /healthz and /readyz while the store is up', async () => {
      expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
      const ready = await t.app.inject({ url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({ status: 'ready', storage: { engine, status: 'up' } });
    });

    it('reports not ready while draining for shutdown', async () => {
      const other = await createTestApp({}, undefined, engine);
      try {
        other.drain();
        expect((await other.app.inject({ url: '/readyz' })).statusCode).toBe(503);
      } finally {
        await other.close();
      }
    });

    it('counts lookups by operation, interface and outcome, the latency and the credits debited', async () => {
      await t.app.inject({ url: '/api/json.aspx/CheckFrance/AB123CD', headers: { authorization: auth } });
      await t.app.inject({ url: '/api/json.aspx/CheckFrance/ZZ999ZZ', headers: { authorization: auth } });
      await t.app.inject({ url: '/api/json.aspx/Bogus%3Cscript%3E/1', headers: { authorization: auth } });
      const res = await t.app.inject({ url: '/metrics' });
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      const text = res.body;
      expect(text).toMatch(/vehicle_lookup_lookups_total\{operation="CheckFrance",interface="json",outcome="success"\} 1/);
      expect(text).toMatch(/vehicle_lookup_lookups_total\{operation="CheckFrance",interface="json",outcome="not_found"\} 1/);
      // Unknown method names do not become label values.
      expect(text).toMatch(/vehicle_lookup_lookups_total\{operation="unknown",interface="json",outcome="unknown_operation"\} 1/);
      expect(text).not.toContain('Bogus');
      expect(text).toMatch(/vehicle_lookup_credits_debited_total\{operation="CheckFrance",interface="json"\} 1/);
      expect(text).toMatch(/vehicle_lookup_lookup_duration_seconds_count\{interface="json",outcome="success"\} 1/);
    });

    it('never shows a stack trace for an unexpected error', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/healthz', headers: { 'content-type': 'application/json' }, payload: '{bad json' });
      expect(res.body).not.toMatch(/\s+at\s+\S+\s+\(/);
    });
  });
});
