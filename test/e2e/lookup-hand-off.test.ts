import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

// The JSON adapter resolves the method and binds the path itself, and hands a failure to the
// pipeline as a refusal: the interface's answers keep their order (credentials first, then the
// rate limit, then the method and the path).
let t: TestApp;
let auth: string;
let limitedAuth: string;

beforeAll(async () => {
  t = await createTestApp();
  auth = t.basic('alice', await t.account('alice', 10));
  limitedAuth = t.basic('busy', await t.account('busy', 10));
  await t.services.accounts.setRateLimits('busy', { perDay: 1 });
});
afterAll(async () => t.close());

describe('JSON hand-off of the resolved operation', () => {
  it('answers 401 before an unknown method or a wrong path shape', async () => {
    for (const url of ['/api/json.aspx/CheckAtlantis/AB123', '/api/json.aspx/CheckUSA/ABC123']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(401);
      expect(res.body).toBe('Authentication required: HTTP Basic with your username and API key');
    }
  });

  it('answers a rate-limited account 429 before an unknown method', async () => {
    expect((await t.app.inject({ url: '/api/json.aspx/CheckAtlantis/AB123', headers: { authorization: limitedAuth } })).statusCode).toBe(500);
    const res = await t.app.inject({ url: '/api/json.aspx/CheckAtlantis/AB123', headers: { authorization: limitedAuth } });
    expect(res.statusCode).toBe(429);
  });

  it('names a known operation in metrics when only its path values were wrong, and hides unknown ones', async () => {
    await t.app.inject({ url: '/api/json.aspx/CheckUSA/ABC123', headers: { authorization: auth } });
    await t.app.inject({ url: '/api/json.aspx/Nope/ABC123', headers: { authorization: auth } });
    const text = (await t.app.inject({ url: '/metrics' })).body;
    expect(text).toMatch(/vehicle_lookup_lookups_total\{operation="CheckUSA",interface="json",outcome="invalid_input"\} 1/);
    expect(text).toMatch(/vehicle_lookup_lookups_total\{operation="unknown",interface="json",outcome="unknown_operation"\} \d+/);
    expect(text).not.toContain('Nope');
    expect((await t.services.accounts.show('alice')).credits).toBe(10);
  });
});
