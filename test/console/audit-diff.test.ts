import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';
import { auditChanges } from '../../src/http/console/audit-diff.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, get, post, type ConsoleSession } from './console-harness.js';

describe('the audit log’s change of a row (issue 26 item 16)', () => {
  it('lists the changed fields with old and new value, and the added and removed ones; unchanged fields not at all', () => {
    expect(auditChanges({ credits: 5, status: 'active', tags: ['a'] }, { credits: 6, status: 'active', tags: ['a', 'b'], note: 'x' })).toEqual([
      { field: 'credits', kind: 'changed', before: 5, after: 6 },
      { field: 'tags', kind: 'changed', before: ['a'], after: ['a', 'b'] },
      { field: 'note', kind: 'added', after: 'x' },
    ]);
    expect(auditChanges({ keyId: 3, revokedAt: null }, { keyId: 3, revoked: true })).toEqual([
      { field: 'revoked', kind: 'added', after: true },
      { field: 'revokedAt', kind: 'removed', before: null },
    ]);
  });

  it('names a nested field by its path, and reads a create as all added and a delete as all removed', () => {
    expect(auditChanges({ rateLimits: { perSecond: null, perDay: 10 } }, { rateLimits: { perSecond: 5, perDay: 10 } })).toEqual([
      { field: 'rateLimits.perSecond', kind: 'changed', before: null, after: 5 },
    ]);
    expect(auditChanges(undefined, { credits: 3 })).toEqual([{ field: 'credits', kind: 'added', after: 3 }]);
    expect(auditChanges({ credits: 3 }, undefined)).toEqual([{ field: 'credits', kind: 'removed', before: 3 }]);
    expect(auditChanges({ a: 1 }, { a: 1 })).toEqual([]);
  });
});

describe('the audit log page shows each change as a short diff', () => {
  let t: TestApp;
  let root: ConsoleSession;
  beforeEach(async () => {
    t = await createTestApp();
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 5);
    const { inviteToken } = await users(t).createOperator('olga', 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    root = await consoleLogin(t, 'olga');
  });
  afterEach(async () => {
    await t.close();
  });

  /** The Change cell of the newest row with this action. */
  async function changeOf(action: string): Promise<string> {
    const page = await get(t, `/console/admin/audit?action=${action}`, root);
    expect(page.statusCode).toBe(200);
    const row = /<tbody><tr>([\s\S]*?)<\/tr>/.exec(page.body)?.[1] ?? '';
    return [...row.matchAll(/<td>([\s\S]*?)<\/td>/g)].at(-1)?.[1] ?? '';
  }

  it('a grant reads "credits: 5 → 6" with its amount and note added; the raw JSON stays behind a details', async () => {
    expect((await post(t, '/console/admin/accounts/acme/credits', { operation: 'grant', amount: 1, note: 'October' }, root)).statusCode).toBe(303);
    const change = await changeOf('credits.grant');
    expect(change).toContain('<li><code>credits</code>: 5 → 6</li>');
    expect(change).toContain('<li class="added"><code>amount</code>: 1 <span class="muted">(added)</span></li>');
    expect(change).toContain('<li class="added"><code>note</code>: October <span class="muted">(added)</span></li>');
    expect(change).toMatch(/<details><summary>JSON<\/summary><p>Before: <code>\{&quot;credits&quot;:5\}<\/code><\/p><p>After: <code>\{&quot;credits&quot;:6,/);
  });

  it('a settings change names the nested field that changed and nothing else', async () => {
    expect((await post(t, '/console/admin/accounts/acme/settings', { requireApiKey: 'false', perSecond: '5', perDay: '' }, root)).statusCode).toBe(303);
    const change = await changeOf('account.update');
    const items = [...change.matchAll(/<li[^>]*>([\s\S]*?)<\/li>/g)].map((m) => m[1]);
    expect(items).toEqual(['<code>rateLimits.perSecond</code>: null → 5']);
  });

  it('a create lists its fields without marks', async () => {
    expect((await post(t, '/console/admin/accounts', { username: 'bob', credits: 3 }, root)).statusCode).toBe(201);
    expect(await changeOf('account.create')).toContain('<ul class="diff"><li><code>credits</code>: 3</li></ul>');
  });

  it('keeps markup typed by a user as text in the diff and in the raw JSON', async () => {
    const evil = '<img src=x onerror=alert(1)>';
    await post(t, '/console/admin/accounts/acme/credits', { operation: 'grant', amount: 1, note: evil }, root);
    const change = await changeOf('credits.grant');
    expect(change).not.toContain('<img');
    expect(change).toContain('<code>note</code>: &lt;img src=x onerror=alert(1)&gt; <span class="muted">(added)</span>');
    expect(change).toContain('&quot;note&quot;:&quot;&lt;img src=x onerror=alert(1)&gt;&quot;');
  });
});
