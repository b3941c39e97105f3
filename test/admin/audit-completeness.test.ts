import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreditAlerts } from '../../src/alerts/credit-alerts.js';
import { SYSTEM_ACTOR, type AuditLog, type AuditRow } from '../../src/audit/audit-log.js';
import { TestPlates } from '../../src/datasets/test-plates.js';
import { WebhookService } from '../../src/webhooks/webhook.service.js';
import { cli } from '../cli/cli-harness.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, customer, operator } from './admin-harness.js';

/**
 * Every change to webhook endpoints, alert thresholds and test plates made through the admin and
 * account APIs and the CLI writes an audit row, in the change's own transaction, and no row holds
 * a secret (issue 16 "Audit log").
 */
describe.each(ENGINES)('audit rows of alerts, webhooks and test plates on %s', (engine) => {
  let t: TestApp;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    t = await createTestApp({ SEED_DEMO: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', CREDIT_ALERT_SWEEP_MS: '3600000' }, undefined, engine);
    await t.account('alice', 50);
    await t.account('bob', 50);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await t.close();
  });

  const allRows = async (): Promise<AuditRow[]> => t.services.audit.list({ limit: 1000 });
  const row = (rows: AuditRow[], action: string, target: string): AuditRow | undefined => rows.find((r) => r.action === action && r.target === target);

  it('records each change of a customer’s endpoints and thresholds against the account, as the customer, with no secret', async () => {
    const alice = as(t, await customer(t, 'alice', 'alice-owner'));
    const created = (await alice('POST', '/account/api/webhooks', { url: 'http://127.0.0.1:9/in?token=receiver-secret', description: 'billing' })).json<{ endpoint: { id: number }; secret: string }>();
    const id = created.endpoint.id;
    expect((await alice('PATCH', `/account/api/webhooks/${id}`, { enabled: false, description: 'ops' })).statusCode).toBe(200);
    const rotated = (await alice('POST', `/account/api/webhooks/${id}/rotate-secret`, { graceSeconds: 600 })).json<{ secret: string }>();
    expect((await alice('POST', `/account/api/webhooks/${id}/test`)).statusCode).toBe(202);
    expect((await alice('PUT', '/account/api/alerts', { thresholds: [10, 5] })).statusCode).toBe(200);
    expect((await alice('PUT', '/account/api/alerts', { thresholds: null })).statusCode).toBe(200);
    expect((await alice('DELETE', `/account/api/webhooks/${id}`)).statusCode).toBe(204);

    const rows = await allRows();
    const actions = rows.filter((r) => r.target === 'alice' && r.targetKind === 'account').map((r) => r.action);
    expect(actions.slice(0, 7)).toEqual(['webhook.delete', 'alerts.reset', 'alerts.set', 'webhook.test-send', 'webhook.rotate-secret', 'webhook.update', 'webhook.create']);
    for (const r of rows.filter((r) => r.action.startsWith('webhook.') || r.action.startsWith('alerts.'))) {
      expect(r.actor, r.action).toMatchObject({ kind: 'customer', name: 'alice-owner', address: '127.0.0.1' });
    }
    expect(row(rows, 'webhook.create', 'alice')?.after).toEqual({ endpointId: id, url: 'http://127.0.0.1:9/in?…', description: 'billing', enabled: true, events: ['credits.low', 'credits.depleted', 'key.cap.warning', 'key.cap.reached'] });
    expect(row(rows, 'webhook.update', 'alice')).toMatchObject({ before: { endpointId: id, enabled: true, description: 'billing' }, after: { endpointId: id, enabled: false, description: 'ops' } });
    expect(row(rows, 'webhook.rotate-secret', 'alice')?.after).toMatchObject({ endpointId: id, graceSeconds: 600 });
    expect(row(rows, 'alerts.set', 'alice')).toMatchObject({ before: { thresholds: [100, 20, 0], custom: false }, after: { thresholds: [10, 5], custom: true } });
    expect(row(rows, 'alerts.reset', 'alice')).toMatchObject({ before: { thresholds: [10, 5], custom: true }, after: { thresholds: [100, 20, 0], custom: false } });
    // No secret in any row: neither signing secret, nor the token in the receiver's query string.
    const text = JSON.stringify(rows);
    for (const secret of [created.secret, rotated.secret, created.secret.slice(6), rotated.secret.slice(6), 'receiver-secret']) expect(text).not.toContain(secret);
    expect(text).not.toContain('whsec_');
  });

  it('records a receiver URL without the token its path or query may carry', async () => {
    const alice = as(t, await customer(t, 'alice', 'alice-owner'));
    const token = 'XyZ0123456789abcdefGHIJk';
    const created = (await alice('POST', '/account/api/webhooks', { url: `http://127.0.0.1:9/services/T0A1B2C3D/B0A1B2C3D/${token}?k=1` })).json<{ endpoint: { id: number } }>();
    expect((await alice('DELETE', `/account/api/webhooks/${created.endpoint.id}`)).statusCode).toBe(204);
    const rows = await allRows();
    expect(row(rows, 'webhook.create', 'alice')?.after).toMatchObject({ url: 'http://127.0.0.1:9/services/T0A1B2C3D/B0A1B2C3D/…?…' });
    expect(row(rows, 'webhook.delete', 'alice')?.before).toMatchObject({ url: 'http://127.0.0.1:9/services/T0A1B2C3D/B0A1B2C3D/…?…' });
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('records an operator’s changes to an account’s alerts and to its own endpoints, as the operator', async () => {
    const root = as(t, await operator(t, 'root'));
    const own = (await root('POST', '/admin/api/webhooks', { url: 'http://127.0.0.1:9/ops' })).json<{ endpoint: { id: number }; secret: string }>();
    const bobs = (await root('POST', '/admin/api/accounts/bob/webhooks', { url: 'http://127.0.0.1:9/bob' })).json<{ endpoint: { id: number }; secret: string }>();
    expect((await root('PUT', '/admin/api/accounts/bob/alerts', { thresholds: [7] })).statusCode).toBe(200);
    const rotated = (await root('POST', `/admin/api/webhooks/${own.endpoint.id}/rotate-secret`, {})).json<{ secret: string }>();
    expect((await root('DELETE', `/admin/api/webhooks/${own.endpoint.id}`)).statusCode).toBe(204);

    const rows = await allRows();
    const operatorEndpoint = rows.filter((r) => r.targetKind === 'webhook-endpoint' && r.target === String(own.endpoint.id)).map((r) => r.action);
    expect(operatorEndpoint).toEqual(['webhook.delete', 'webhook.rotate-secret', 'webhook.create']);
    expect(row(rows, 'webhook.create', 'bob')).toMatchObject({ actor: { kind: 'operator', name: 'root' }, targetKind: 'account', after: { endpointId: bobs.endpoint.id } });
    expect(row(rows, 'alerts.set', 'bob')).toMatchObject({ actor: { kind: 'operator', name: 'root' }, after: { thresholds: [7] } });
    const text = JSON.stringify(rows);
    for (const secret of [own.secret, bobs.secret, rotated.secret]) expect(text).not.toContain(secret.slice(6));
    // The account's audit trail (what the console's account page lists) shows them.
    const trail = await t.services.audit.list({ targetKind: 'account', target: 'bob', limit: 10 });
    expect(trail.map((r) => r.action)).toEqual(expect.arrayContaining(['webhook.create', 'alerts.set']));
  });

  it('records test plates added and removed through the API and the CLI, each as its actor', async () => {
    const root = as(t, await operator(t, 'root'));
    expect((await root('POST', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['EG258MA'] })).statusCode).toBe(201);
    // Adding a free plate again changes nothing and records nothing: a create that found its row (issue 28).
    expect((await root('POST', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['EG258MA'] })).statusCode).toBe(409);
    const env = { DATA_DIR: t.dataDir, LOG_LEVEL: 'silent', ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}) };
    const added = await cli(env, ['test-plates', 'add', 'CheckUSA', 'h84 jae', 'nj']);
    expect(added.code, added.err).toBe(0);
    const removed = await cli(env, ['test-plates', 'remove', 'CheckFrance', 'EG258MA']);
    expect(removed.code, removed.err).toBe(0);
    expect((await cli(env, ['test-plates', 'remove', 'CheckFrance', 'EG258MA'])).code).toBe(0);
    expect((await root('DELETE', '/admin/api/test-plates', { operation: 'CheckUSA', values: ['H84JAE', 'NJ'] })).statusCode).toBe(200);

    const rows = (await allRows()).filter((r) => r.targetKind === 'test-plate');
    expect(rows.map((r) => [r.action, r.target, r.actor.kind])).toEqual([
      ['test-plate.remove', 'CheckUSA H84JAE|NJ', 'operator'],
      ['test-plate.remove', 'CheckFrance EG258MA', 'cli'],
      ['test-plate.add', 'CheckUSA H84JAE|NJ', 'cli'],
      ['test-plate.add', 'CheckFrance EG258MA', 'operator'],
    ]);
    expect(rows[1]?.actor.name).not.toBe('');
  });

  it('writes no change when its audit row cannot be written: the change and its row share one transaction', async () => {
    const failing = { record: () => Promise.reject(new Error('audit log unavailable')) } as unknown as AuditLog;
    const clock = { now: () => new Date() };
    const { storage, records, alerting } = t.services;
    const aliceId = (await t.services.accounts.show('alice')).id;

    const webhooks = new WebhookService(storage, alerting.repository, clock, { audit: failing, allowPrivateUrls: true });
    await expect(webhooks.create({ actor: 'account', accountId: aliceId }, { url: 'http://127.0.0.1:9/x' })).rejects.toThrow('audit log unavailable');
    expect(await alerting.webhooks.list({ actor: 'account', accountId: aliceId })).toEqual([]);

    const { endpoint } = await alerting.webhooks.create({ actor: 'account', accountId: aliceId }, { url: 'http://127.0.0.1:9/y' });
    const scope = { actor: 'account', accountId: aliceId } as const;
    await expect(webhooks.update(scope, endpoint.id, { enabled: false })).rejects.toThrow('audit log unavailable');
    await expect(webhooks.rotateSecret(scope, endpoint.id, 60)).rejects.toThrow('audit log unavailable');
    await expect(webhooks.sendTest(scope, endpoint.id)).rejects.toThrow('audit log unavailable');
    await expect(webhooks.remove(scope, endpoint.id)).rejects.toThrow('audit log unavailable');
    expect(await alerting.webhooks.show(scope, endpoint.id)).toEqual(endpoint);
    expect(await alerting.webhooks.messages(scope, endpoint.id)).toEqual([]);

    const alerts = new CreditAlerts(storage, webhooks, clock, { defaults: [3], audit: failing });
    await expect(alerts.setThresholds(aliceId, [9], SYSTEM_ACTOR)).rejects.toThrow('audit log unavailable');
    expect(await alerting.alerts.thresholds(aliceId)).toMatchObject({ custom: false });

    const plates = new TestPlates(records, () => 0, storage, failing, clock);
    await expect(plates.add('CheckFrance', 'EG258MA', SYSTEM_ACTOR)).rejects.toThrow('audit log unavailable');
    expect(await records.listTestPlates()).toEqual([]);
  });
});
