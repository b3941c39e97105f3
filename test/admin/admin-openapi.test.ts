import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/test-app.js';
import { adminOpenApiText } from './admin-openapi-source.js';

const COMMITTED = readFileSync(new URL('../../docs/admin-openapi.json', import.meta.url), 'utf8');

describe('the admin and account APIs OpenAPI document', () => {
  it('is committed as generated (run npx tsx scripts/generate-admin-openapi.ts after changing a route)', async () => {
    expect(await adminOpenApiText()).toBe(COMMITTED);
  });

  it('is a valid OpenAPI 3.1 document (a real validator, and one that refuses a broken copy)', async () => {
    const valid = await new Validator().validate(JSON.parse(COMMITTED) as Record<string, unknown>);
    expect(valid.errors).toBeUndefined();
    expect(valid.valid).toBe(true);
    // A parameter "in" a place OpenAPI does not know (Swagger 2's "body").
    const broken = JSON.parse(COMMITTED.replace('"in": "path"', '"in": "body"')) as Record<string, unknown>;
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('describes every route with its parameters, body schema and security, the public ones without', () => {
    const doc = JSON.parse(COMMITTED) as { openapi: string; paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }>; requestBody?: unknown; security: unknown[] }>> };
    expect(doc.openapi).toBe('3.1.0');
    const roll = doc.paths['/admin/api/accounts/{username}/keys/{id}/roll']?.post;
    expect(roll?.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(['path:username', 'path:id']);
    expect(roll?.requestBody).toBeDefined();
    expect(doc.paths['/admin/api/login']?.post?.security).toEqual([]);
    // Reads need only the session (or a token); writes with the cookie also its CSRF token.
    expect(doc.paths['/account/api/keys']?.get?.security).toEqual([{ session: [] }]);
    expect(doc.paths['/account/api/keys']?.post?.security).toEqual([{ session: [], csrf: [] }]);
    expect(doc.paths['/admin/api/accounts']?.get?.security).toEqual([{ session: [] }, { operatorToken: [] }]);
    expect(doc.paths['/admin/api/accounts']?.post?.security).toEqual([{ session: [], csrf: [] }, { operatorToken: [] }]);
    expect(Object.keys(doc.paths).length).toBeGreaterThan(25);
  });

  it('is served with an interactive documentation page', async () => {
    const t = await createTestApp({ SEED_DEMO: 'false' });
    try {
      const doc = await t.app.inject({ url: '/admin/api/openapi.json' });
      expect(doc.statusCode).toBe(200);
      expect(`${JSON.stringify(doc.json(), null, 2)}\n`).toBe(COMMITTED);
      const page = await t.app.inject({ url: '/admin/api/docs' });
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('data-openapi="/admin/api/openapi.json"');
      // Offline and under a strict policy: nothing from another origin, no inline script or style.
      expect(page.headers['content-security-policy']).toContain("script-src 'self';");
      expect(page.body).not.toMatch(/https?:\/\//);
      expect(page.body).not.toMatch(/<script>|<style|style=/);
      // The JSON interface's page and this one are one page (src/http/site/openapi-docs/): the same script.
      const script = await t.app.inject({ url: '/admin/api/docs/api-docs.js' });
      expect(script.statusCode).toBe(200);
      expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(script.body).toContain("getElementById('api-docs')");
      expect(script.body).toBe((await t.app.inject({ url: '/openapi/assets/api-docs.js' })).body);
      const style = await t.app.inject({ url: '/admin/api/docs/api-docs.css' });
      expect(style.statusCode).toBe(200);
      expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
      // The page and its assets are not operations of the document.
      expect(Object.keys(doc.json<{ paths: Record<string, unknown> }>().paths).filter((path) => path.includes('/docs'))).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
