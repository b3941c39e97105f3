/**
 * Issue 17 item 11: /metrics was open to anyone. METRICS_TOKEN makes it require
 * `Authorization: Bearer <token>`; /healthz and /readyz stay open for load balancers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const TOKEN = 'metrics-token-0123456789abcdef';

describe('/metrics with METRICS_TOKEN set', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ METRICS_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['no credentials', {}],
    ['a wrong token', { authorization: 'Bearer metrics-token-0123456789abcdeX' }],
    ['a shorter token', { authorization: 'Bearer metrics' }],
    ['the token as Basic', { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` }],
  ])('refuses %s with 401 and a Bearer challenge, and shows no metric', async (_name, headers) => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).not.toContain('vehicle_lookup_');
  });

  it('answers the right token (the scheme in any letter case)', async () => {
    for (const scheme of ['Bearer', 'bearer']) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `${scheme} ${TOKEN}` } });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('vehicle_lookup_http_requests_total');
    }
  });

  it('leaves /healthz and /readyz open', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});

describe('METRICS_TOKEN', () => {
  it('is refused at start-up when it is too short to be a secret', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be 16 to 256 characters/);
  });

  it('unset leaves /metrics open, as before', async () => {
    const t = await createTestApp();
    try {
      expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
