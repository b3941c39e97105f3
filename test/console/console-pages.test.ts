import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseThresholds } from '../../src/http/console/alerts.routes.js';
import { FRANCE, PASSWORD, users } from '../admin/admin-harness.js';
import { verifyStandardWebhook } from '../alerts/standard-webhooks-verifier.js';
import { FakeHttpServer } from '../fakes/fake-http-server.js';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, get, post, type ConsoleSession } from './console-harness.js';

/**
 * The console pages of issue 18 beyond accounts and keys: alert thresholds and webhook endpoints
 * (a customer's own, any account's for operators, the operator's own), test plates, operator API
 * tokens and "log out everywhere", server-rendered and posted as a browser posts its forms.
 */
describe.each(await enginesToTest())('console: alerts and webhooks, test plates, tokens, log out everywhere on %s', (engine) => {
  let t: TestApp;
  let receiver: FakeHttpServer;

  beforeEach(async () => {
    // The receiver listens on 127.0.0.1; the sweep never runs during a test.
    t = await createTestApp(await engineEnv(engine, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', CREDIT_ALERT_SWEEP_MS: '3600000' }), undefined, engine);
    await t.importRecords([FRANCE]);
    receiver = await FakeHttpServer.start(() => ({ status: 204 }));
  });
  afterEach(async () => {
    await receiver.close();
    await t.close();
  });

  async function operatorSession(name: string, role: 'admin' | 'viewer' = 'admin'): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createOperator(name, role, true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    return consoleLogin(t, name);
  }

  async function customerSession(account: string, name: string, role: 'owner' | 'member' = 'owner'): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createCustomer(account, name, role);
    await users(t).acceptInvite(inviteToken, PASSWORD);
    return consoleLogin(t, name);
  }

  const accountId = async (username: string) => (await t.services.accounts.show(username)).id;
  const endpoints = async (accountIdOrNull: number | null) => t.services.alerting.webhooks.list(accountIdOrNull === null ? { actor: 'operator', accountId: null } : { actor: 'account', accountId: accountIdOrNull });
  const secretOf = (body: string) => /data-testid="secret">([^<]+)</.exec(body)?.[1] ?? '';
  const EVENTS = { 'event_credits.low': 'true', 'event_credits.depleted': 'true' };

  it('reads thresholds as a comma-separated list of whole numbers', () => {
    expect(parseThresholds('100, 20, 0')).toEqual([100, 20, 0]);
    expect(parseThresholds(' 5 ;7 ')).toEqual([5, 7]);
    expect(parseThresholds('')).toEqual([]);
    expect(parseThresholds(undefined)).toEqual([]);
    expect(parseThresholds('10, -1')).toBeUndefined();
    expect(parseThresholds('ten')).toBeUndefined();
    expect(parseThresholds('1.5')).toBeUndefined();
  });

  it('lets a customer owner set its thresholds, refuses a bad list with the form shown again, and goes back to the server default', async () => {
    await t.account('alice', 50);
    const owner = await customerSession('alice', 'alice-owner');
    const page = await get(t, '/console/account/alerts', owner);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Thresholds: <strong>100, 20, 0</strong> <span class="muted">(the server default)</span>');
    expect(page.body).toContain('<li><a href="/console/account/alerts" aria-current="page">Alerts and webhooks</a></li>');

    const saved = await post(t, '/console/account/alerts/thresholds', { thresholds: '500, 50, 0' }, owner);
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe('/console/account/alerts?done=thresholds-saved');
    expect(await t.services.alerting.alerts.thresholds(await accountId('alice'))).toMatchObject({ thresholds: [500, 50, 0], custom: true });
    expect((await get(t, String(saved.headers.location), owner)).body).toContain("Thresholds: <strong>500, 50, 0</strong> (this account's own)");

    for (const thresholds of ['lots', '1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11']) {
      const refused = await post(t, '/console/account/alerts/thresholds', { thresholds }, owner);
      expect(refused.statusCode, thresholds).toBe(400);
      expect(refused.body).toContain('role="alert"');
      expect(refused.body).toContain(`value="${thresholds}"`);
    }
    expect((await t.services.alerting.alerts.thresholds(await accountId('alice'))).thresholds).toEqual([500, 50, 0]);

    const reset = await post(t, '/console/account/alerts/thresholds/reset', {}, owner);
    expect(reset.headers.location).toBe('/console/account/alerts?done=thresholds-reset');
    expect(await t.services.alerting.alerts.thresholds(await accountId('alice'))).toMatchObject({ thresholds: [100, 20, 0], custom: false });
  });

  it('registers an endpoint (secret shown once), sends a signed test event to it, shows the delivery, rotates the secret, disables and deletes it', async () => {
    await t.account('alice', 50);
    const owner = await customerSession('alice', 'alice-owner');
    const created = await post(t, '/console/account/webhooks', { url: `${receiver.url}/hooks`, description: 'billing', ...EVENTS }, owner);
    expect(created.statusCode).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const secret = secretOf(created.body);
    expect(secret).toMatch(/^whsec_/);
    const [endpoint] = await endpoints(await accountId('alice'));
    expect(endpoint).toMatchObject({ url: `${receiver.url}/hooks`, description: 'billing', enabled: true, events: ['credits.low', 'credits.depleted'] });
    const href = `/console/account/webhooks/${endpoint?.id ?? 0}`;
    expect(created.body).toContain(`href="${href}"`);

    // The list and the endpoint page never show the secret again.
    const list = await get(t, '/console/account/alerts', owner);
    expect(list.body).toContain(`<td class="url"><a href="${href}"><code>${receiver.url}/hooks</code></a>`);
    expect(list.body).not.toContain(secret);

    const sent = await post(t, `${href}/test`, {}, owner);
    expect(sent.headers.location).toBe(`${href}?done=test-sent`);
    await t.services.alerting.dispatcher.drain();
    expect(receiver.requests).toHaveLength(1);
    const delivery = receiver.requests[0];
    expect(verifyStandardWebhook([secret], delivery?.headers ?? {}, delivery?.body ?? '')).toEqual([0]);
    expect(JSON.parse(delivery?.body ?? '{}')).toMatchObject({ type: 'test', data: { endpointId: endpoint?.id } });

    const log = await get(t, `${href}?done=test-sent`, owner);
    expect(log.statusCode).toBe(200);
    expect(log.body).toContain('A test event is queued');
    expect(log.body).not.toContain(secret);
    expect(log.body).toMatch(/<h3 id="m-msg_[\w-]+"><code>test<\/code> <code>msg_[\w-]+<\/code>: <span class="status-active">delivered<\/span><\/h3>/);
    expect(log.body).toMatch(/<td class="num">1<\/td><td class="num">204<\/td><td class="num">\d+<\/td><td><span class="status-active">delivered<\/span><\/td><td><span class="muted">empty body<\/span><\/td>/);

    // A new secret, shown once; for the grace period both sign.
    const rotated = await post(t, `${href}/rotate`, { graceSeconds: 3600 }, owner);
    expect(rotated.statusCode).toBe(200);
    const next = secretOf(rotated.body);
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);
    expect(rotated.body).toContain('each delivery is signed with the old one too');
    await post(t, `${href}/test`, {}, owner);
    await t.services.alerting.dispatcher.drain();
    const second = receiver.requests[1];
    expect(verifyStandardWebhook([secret, next], second?.headers ?? {}, second?.body ?? '')).toEqual([0, 1]);

    const disabled = await post(t, `${href}/enabled`, { enabled: 'false' }, owner);
    expect(disabled.headers.location).toBe(`${href}?done=disabled`);
    expect((await endpoints(await accountId('alice')))[0]?.enabled).toBe(false);
    expect((await get(t, href, owner)).body).toContain('<span class="status-disabled">disabled</span>');
    await post(t, `${href}/enabled`, { enabled: 'true' }, owner);
    expect((await endpoints(await accountId('alice')))[0]?.enabled).toBe(true);

    const deleted = await post(t, `${href}/delete`, {}, owner);
    expect(deleted.headers.location).toBe('/console/account/alerts?done=deleted');
    expect(await endpoints(await accountId('alice'))).toEqual([]);
    expect((await get(t, href, owner)).statusCode).toBe(404);

    // Every change is in the audit trail, made by the console's user, and no secret is in it.
    const trail = await t.services.audit.list({ targetKind: 'account', target: 'alice', limit: 50 });
    const changes = trail.filter((r) => r.action.startsWith('webhook.'));
    expect(changes.map((r) => r.actor.name)).toEqual(changes.map(() => 'alice-owner'));
    expect(new Set(changes.map((r) => r.action))).toEqual(new Set(['webhook.create', 'webhook.test-send', 'webhook.rotate-secret', 'webhook.update', 'webhook.delete']));
    expect(JSON.stringify(trail)).not.toContain(secret);
    expect(JSON.stringify(trail)).not.toContain(next);
  });

  it('refuses a private or malformed URL and an endpoint without events, showing the form again with what was typed', async () => {
    await t.account('alice', 50);
    const strict = await createTestApp({});
    try {
      await strict.account('alice', 50);
      const { inviteToken } = await users(strict).createCustomer('alice', 'alice-owner', 'owner');
      await users(strict).acceptInvite(inviteToken, PASSWORD);
      const owner = await consoleLogin(strict, 'alice-owner');
      const res = await post(strict, '/console/account/webhooks', { url: 'http://169.254.169.254/latest', ...EVENTS }, owner);
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('Not registered:');
      expect(res.body).toContain('value="http://169.254.169.254/latest"');
      expect(await strict.services.alerting.webhooks.list({ actor: 'account', accountId: (await strict.services.accounts.show('alice')).id })).toEqual([]);
    } finally {
      await strict.close();
    }
    const owner = await customerSession('alice', 'alice-owner');
    const malformed = await post(t, '/console/account/webhooks', { url: 'not a url', ...EVENTS }, owner);
    expect(malformed.statusCode).toBe(400);
    expect(malformed.body).toContain('url must be an absolute http or https URL');
    const none = await post(t, '/console/account/webhooks', { url: `${receiver.url}/x` }, owner);
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('events must name at least one event type');
    // The unticked boxes stay unticked.
    expect(none.body).not.toMatch(/name="event_credits\.low" value="true" checked/);
    const unknown = await post(t, '/console/account/webhooks', { url: `${receiver.url}/x`, event_everything: 'true' }, owner);
    expect(unknown.statusCode).toBe(400);
    expect(await endpoints(await accountId('alice'))).toEqual([]);
  });

  it('refuses alert changes posted without the CSRF token, and changes nothing', async () => {
    await t.account('alice', 50);
    const owner = await customerSession('alice', 'alice-owner');
    await post(t, '/console/account/webhooks', { url: `${receiver.url}/a`, ...EVENTS }, owner);
    const [endpoint] = await endpoints(await accountId('alice'));
    const href = `/console/account/webhooks/${endpoint?.id ?? 0}`;
    for (const [url, fields] of [
      ['/console/account/webhooks', { url: `${receiver.url}/b`, ...EVENTS }],
      ['/console/account/alerts/thresholds', { thresholds: '1' }],
      [`${href}/enabled`, { enabled: 'false' }],
      [`${href}/delete`, {}],
      [`${href}/test`, {}],
      [`${href}/rotate`, { graceSeconds: 0 }],
      [`${href}/messages/msg_AAAAAAAAAAAAAAAAAAAAAA/resend`, {}],
    ] as const) {
      const res = await post(t, url, fields, owner, { csrf: false });
      expect(res.statusCode, url).toBe(403);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    }
    expect(await endpoints(await accountId('alice'))).toEqual([endpoint]);
    expect((await t.services.alerting.alerts.thresholds(await accountId('alice'))).custom).toBe(false);
    expect(await t.services.alerting.webhooks.messages({ actor: 'account', accountId: await accountId('alice') }, endpoint?.id ?? 0)).toEqual([]);
  });

  it('lets a member read the alerts page and the delivery log with no buttons, and refuses every change', async () => {
    await t.account('alice', 50);
    const owner = await customerSession('alice', 'alice-owner');
    await post(t, '/console/account/webhooks', { url: `${receiver.url}/a`, ...EVENTS }, owner);
    const [endpoint] = await endpoints(await accountId('alice'));
    const href = `/console/account/webhooks/${endpoint?.id ?? 0}`;
    const member = await customerSession('alice', 'alice-member', 'member');
    const page = await get(t, '/console/account/alerts', member);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`${receiver.url}/a`);
    const detail = await get(t, href, member);
    expect(detail.statusCode).toBe(200);
    for (const body of [page.body, detail.body]) {
      // The header's logout form is the only form that posts.
      expect(body.match(/<form method="post"/g)).toHaveLength(1);
      expect(body).toContain('<form method="post" action="/console/logout">');
    }
    for (const [url, fields] of [
      ['/console/account/webhooks', { url: `${receiver.url}/b`, ...EVENTS }],
      ['/console/account/alerts/thresholds', { thresholds: '1' }],
      ['/console/account/alerts/thresholds/reset', {}],
      [`${href}/enabled`, { enabled: 'false' }],
      [`${href}/delete`, {}],
      [`${href}/test`, {}],
      [`${href}/rotate`, { graceSeconds: 0 }],
      [`${href}/messages/msg_AAAAAAAAAAAAAAAAAAAAAA/resend`, {}],
    ] as const) {
      expect((await post(t, url, fields, member)).statusCode, url).toBe(403);
    }
    expect(await endpoints(await accountId('alice'))).toEqual([endpoint]);
    expect((await t.services.alerting.alerts.thresholds(await accountId('alice'))).custom).toBe(false);
  });

  it("keeps customer A from seeing or changing customer B's endpoints, or the operator's, by guessing ids: 404 like a missing one", async () => {
    await t.account('alice', 50);
    await t.account('bob', 50);
    const bobOwner = await customerSession('bob', 'bob-owner');
    await post(t, '/console/account/webhooks', { url: `${receiver.url}/bob`, description: 'bob-only', ...EVENTS }, bobOwner);
    const [bobs] = await endpoints(await accountId('bob'));
    const root = await operatorSession('root');
    await post(t, '/console/admin/webhooks', { url: `${receiver.url}/ops`, ...EVENTS }, root);
    const [operators] = await endpoints(null);

    const alice = await customerSession('alice', 'alice-owner');
    const list = await get(t, '/console/account/alerts', alice);
    expect(list.body).not.toContain('bob-only');
    expect(list.body).not.toContain(`${receiver.url}/bob`);
    expect(list.body).not.toContain(`${receiver.url}/ops`);
    for (const id of [bobs?.id ?? 0, operators?.id ?? 0, 999_999]) {
      const href = `/console/account/webhooks/${id}`;
      const page = await get(t, href, alice);
      expect(page.statusCode, href).toBe(404);
      expect(page.body).not.toContain(receiver.url);
      for (const [action, fields] of [
        ['enabled', { enabled: 'false' }],
        ['rotate', { graceSeconds: 0 }],
        ['test', {}],
        ['delete', {}],
      ] as const) {
        expect((await post(t, `${href}/${action}`, fields, alice)).statusCode, `${href}/${action}`).toBe(404);
      }
    }
    expect(await endpoints(await accountId('bob'))).toEqual([bobs]);
    expect(await endpoints(null)).toEqual([operators]);
    expect(await t.services.alerting.webhooks.messages({ actor: 'account', accountId: await accountId('bob') }, bobs?.id ?? 0)).toEqual([]);
    // Nor may a customer open the operator's pages.
    expect((await get(t, '/console/admin/webhooks', alice)).statusCode).toBe(403);
    expect((await get(t, '/console/admin/accounts/bob/alerts', alice)).statusCode).toBe(403);
  });

  it("lets an operator manage an account's thresholds and endpoints from its page, and its own endpoints apart; a viewer only reads", async () => {
    await t.account('bob', 50);
    const root = await operatorSession('root');
    const account = await get(t, '/console/admin/accounts/bob', root);
    expect(account.body).toContain('href="/console/admin/accounts/bob/alerts"');

    expect((await post(t, '/console/admin/accounts/bob/alerts/thresholds', { thresholds: '30, 10' }, root)).headers.location).toBe('/console/admin/accounts/bob/alerts?done=thresholds-saved');
    expect((await t.services.alerting.alerts.thresholds(await accountId('bob'))).thresholds).toEqual([30, 10]);
    const created = await post(t, '/console/admin/accounts/bob/webhooks', { url: `${receiver.url}/bob`, ...EVENTS }, root);
    expect(created.statusCode).toBe(201);
    const [bobs] = await endpoints(await accountId('bob'));
    expect(bobs).toMatchObject({ createdBy: 'operator', accountId: await accountId('bob') });
    expect(created.body).toContain(`href="/console/admin/accounts/bob/webhooks/${bobs?.id ?? 0}"`);

    const own = await post(t, '/console/admin/webhooks', { url: `${receiver.url}/ops`, description: 'all accounts', ...EVENTS }, root);
    expect(own.statusCode).toBe(201);
    const [operators] = await endpoints(null);
    expect(operators).toMatchObject({ accountId: null, description: 'all accounts' });
    const ownPage = await get(t, '/console/admin/webhooks', root);
    expect(ownPage.body).toContain(`${receiver.url}/ops`);
    expect(ownPage.body).not.toContain(`${receiver.url}/bob`);
    expect(ownPage.body).not.toContain('Low-credit thresholds');
    // Each endpoint answers under its own scope only.
    expect((await get(t, `/console/admin/webhooks/${bobs?.id ?? 0}`, root)).statusCode).toBe(404);
    expect((await get(t, `/console/admin/accounts/bob/webhooks/${operators?.id ?? 0}`, root)).statusCode).toBe(404);
    expect((await get(t, '/console/admin/accounts/nobody/alerts', root)).statusCode).toBe(404);

    const viewer = await operatorSession('watcher', 'viewer');
    for (const url of ['/console/admin/accounts/bob/alerts', `/console/admin/accounts/bob/webhooks/${bobs?.id ?? 0}`, '/console/admin/webhooks', `/console/admin/webhooks/${operators?.id ?? 0}`]) {
      const res = await get(t, url, viewer);
      expect(res.statusCode, url).toBe(200);
      expect(res.body.match(/<form method="post"/g), url).toHaveLength(1);
    }
    for (const [url, fields] of [
      ['/console/admin/accounts/bob/alerts/thresholds', { thresholds: '1' }],
      ['/console/admin/accounts/bob/webhooks', { url: `${receiver.url}/x`, ...EVENTS }],
      [`/console/admin/accounts/bob/webhooks/${bobs?.id ?? 0}/delete`, {}],
      ['/console/admin/webhooks', { url: `${receiver.url}/y`, ...EVENTS }],
      [`/console/admin/webhooks/${operators?.id ?? 0}/enabled`, { enabled: 'false' }],
    ] as const) {
      expect((await post(t, url, fields, viewer)).statusCode, url).toBe(403);
    }
    expect(await endpoints(await accountId('bob'))).toEqual([bobs]);
    expect(await endpoints(null)).toEqual([operators]);
  });

  it('renders endpoint URLs and descriptions typed by users as text', async () => {
    await t.account('alice', 50);
    const owner = await customerSession('alice', 'alice-owner');
    const evil = '<script>alert(1)</script>';
    await post(t, '/console/account/webhooks', { url: `${receiver.url}/"><img src=x onerror=alert(1)>`, description: evil, ...EVENTS }, owner);
    const [endpoint] = await endpoints(await accountId('alice'));
    for (const url of ['/console/account/alerts', `/console/account/webhooks/${endpoint?.id ?? 0}`]) {
      const res = await get(t, url, owner);
      expect(res.body, url).not.toContain('<script>alert');
      expect(res.body, url).not.toContain('<img src=x');
      expect(res.body, url).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    }
  });

  it('lets an operator add a test plate (normalised as a lookup does, several key values too) and remove it, audited; the lookup is free meanwhile', async () => {
    const key = await t.account('alice', 5);
    const lookup = () => t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('alice', key) } });
    const root = await operatorSession('root');
    const page = await get(t, '/console/admin/test-plates?operation=CheckUSA', root);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<li><a href="/console/admin/test-plates" aria-current="page">Test plates</a></li>');
    expect(page.body).toContain('<label for="tp-RegistrationNumber">CheckUSA: RegistrationNumber</label>');
    expect(page.body).toContain('<label for="tp-State">CheckUSA: State</label>');
    expect(page.body).not.toContain('<option value="CheckEuroNCap"');

    const added = await post(t, '/console/admin/test-plates', { operation: 'CheckFrance', value_RegistrationNumber: 'eg-258-ma' }, root);
    expect(added.statusCode).toBe(303);
    expect(added.headers.location).toBe('/console/admin/test-plates?operation=CheckFrance&done=added');
    expect(await t.services.testPlates.list()).toEqual([{ operation: 'CheckFrance', lookupKey: 'EG258MA' }]);
    expect((await lookup()).statusCode).toBe(200);
    expect(await t.services.accounts.balance('alice')).toBe(5);

    const second = await post(t, '/console/admin/test-plates', { operation: 'CheckUSA', value_RegistrationNumber: 'h84jae', value_State: 'nj' }, root);
    expect(second.statusCode).toBe(303);
    const listed = await get(t, String(second.headers.location), root);
    expect(listed.body).toContain('<td>CheckUSA</td><td><span class="muted">RegistrationNumber</span> <code>H84JAE</code>, <span class="muted">State</span> <code>NJ</code></td>');
    expect(listed.body).toContain('The test plate is added');

    // The list's remove button posts the stored values back.
    const removeForm = /<form class="inline" method="post" action="\/console\/admin\/test-plates\/remove"[^>]*>(.*?)<\/form>/s.exec(listed.body.slice(listed.body.indexOf('<td>CheckUSA</td>')))?.[1] ?? '';
    const fields = Object.fromEntries([...removeForm.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
    expect(fields).toMatchObject({ operation: 'CheckUSA', value_RegistrationNumber: 'H84JAE', value_State: 'NJ' });
    const { _csrf: _ignored, ...plate } = fields;
    expect((await post(t, '/console/admin/test-plates/remove', plate, root)).headers.location).toBe('/console/admin/test-plates?operation=CheckUSA&done=removed');
    expect((await post(t, '/console/admin/test-plates/remove', { operation: 'CheckFrance', value_RegistrationNumber: 'EG258MA' }, root)).statusCode).toBe(303);
    expect(await t.services.testPlates.list()).toEqual([]);
    expect((await lookup()).statusCode).toBe(200);
    expect(await t.services.accounts.balance('alice')).toBe(4);

    const again = await post(t, '/console/admin/test-plates/remove', { operation: 'CheckFrance', value_RegistrationNumber: 'EG258MA' }, root);
    expect(again.statusCode).toBe(404);
    expect(again.body).toContain('CheckFrance EG258MA is not a test plate');

    const audit = await t.services.audit.list({ targetKind: 'test-plate', limit: 10 });
    expect(audit.map((r) => [r.action, r.target, r.actor.kind, r.actor.name])).toEqual([
      ['test-plate.remove', 'CheckFrance EG258MA', 'operator', 'root'],
      ['test-plate.remove', 'CheckUSA H84JAE|NJ', 'operator', 'root'],
      ['test-plate.add', 'CheckUSA H84JAE|NJ', 'operator', 'root'],
      ['test-plate.add', 'CheckFrance EG258MA', 'operator', 'root'],
    ]);
  });

  it('refuses a bad test plate with the form shown again, and refuses viewers, customers and posts without the CSRF token', async () => {
    const root = await operatorSession('root');
    const bad = await post(t, '/console/admin/test-plates', { operation: 'CheckUSA', value_RegistrationNumber: 'H84JAE', value_State: '<b>Atlantis</b>' }, root);
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('Not added: State');
    expect(bad.body).toContain('value="&lt;b&gt;Atlantis&lt;/b&gt;"');
    expect((await post(t, '/console/admin/test-plates', { operation: 'CheckAtlantis', value_RegistrationNumber: 'X' }, root)).statusCode).toBe(400);
    expect((await post(t, '/console/admin/test-plates', { operation: 'CheckFrance', value_RegistrationNumber: 'EG258MA', surprise: 'x' }, root)).statusCode).toBe(400);
    expect((await post(t, '/console/admin/test-plates', { operation: 'CheckFrance', value_RegistrationNumber: 'EG258MA' }, root, { csrf: false })).statusCode).toBe(403);

    const viewer = await operatorSession('watcher', 'viewer');
    await t.services.testPlates.add('CheckFrance', 'EG258MA', SYSTEM_ACTOR);
    const page = await get(t, '/console/admin/test-plates', viewer);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<td>CheckFrance</td>');
    expect(page.body.match(/<form method="post"/g)).toHaveLength(1);
    expect(page.body).not.toContain('/console/admin/test-plates/remove');
    expect((await post(t, '/console/admin/test-plates', { operation: 'CheckFrance', value_RegistrationNumber: 'AB123CD' }, viewer)).statusCode).toBe(403);
    expect((await post(t, '/console/admin/test-plates/remove', { operation: 'CheckFrance', value_RegistrationNumber: 'EG258MA' }, viewer)).statusCode).toBe(403);
    expect(await t.services.testPlates.list()).toEqual([{ operation: 'CheckFrance', lookupKey: 'EG258MA' }]);

    await t.account('alice', 5);
    const customer = await customerSession('alice', 'alice-owner');
    expect((await get(t, '/console/admin/test-plates', customer)).statusCode).toBe(403);
    expect((await post(t, '/console/admin/test-plates/remove', { operation: 'CheckFrance', value_RegistrationNumber: 'EG258MA' }, customer)).statusCode).toBe(403);
    expect(await t.services.testPlates.list()).toHaveLength(1);
  });

  it('lets an admin create an operator token (shown once, working at once) and revoke it; the list never shows a secret; a viewer only reads', async () => {
    const root = await operatorSession('root');
    const created = await post(t, '/console/admin/tokens', { name: 'billing sync', scope: 'read' }, root);
    expect(created.statusCode).toBe(201);
    const secret = secretOf(created.body);
    expect(secret).toMatch(/^vlop_/);
    expect(created.body).toContain(`curl -H &#39;Authorization: Bearer ${secret}&#39;`);
    expect(created.body).toContain('The read token <strong>billing sync</strong> works now.');
    const bearer = () => t.app.inject({ url: '/admin/api/accounts', headers: { authorization: `Bearer ${secret}` } });
    expect((await bearer()).statusCode).toBe(200);

    const list = await get(t, '/console/admin/tokens', root);
    expect(list.body).toContain('<li><a href="/console/admin/tokens" aria-current="page">API tokens</a></li>');
    expect(list.body).toContain(`<code>${secret.slice(0, 12)}</code>`);
    expect(list.body).not.toContain(secret);
    const [token] = await t.services.users.tokens();

    const viewer = await operatorSession('watcher', 'viewer');
    const viewed = await get(t, '/console/admin/tokens', viewer);
    expect(viewed.statusCode).toBe(200);
    expect(viewed.body).toContain('<td>billing sync</td>');
    expect(viewed.body.match(/<form method="post"/g)).toHaveLength(1);
    expect((await post(t, '/console/admin/tokens', { name: 'mine', scope: 'write' }, viewer)).statusCode).toBe(403);
    expect((await post(t, `/console/admin/tokens/${token?.id ?? 0}/revoke`, {}, viewer)).statusCode).toBe(403);
    expect((await post(t, `/console/admin/tokens/${token?.id ?? 0}/revoke`, {}, root, { csrf: false })).statusCode).toBe(403);
    expect((await bearer()).statusCode).toBe(200);

    expect((await post(t, '/console/admin/tokens', { name: 'x', scope: 'admin' }, root)).statusCode).toBe(400);
    const markup = await post(t, '/console/admin/tokens', { name: '<b>x</b>', scope: 'read' }, root);
    expect(markup.statusCode).toBe(400);
    // Said at the name field, the form kept (issue 26 item 10).
    expect(markup.body).toContain('<p class="field-error" id="tk-name-error" role="alert">A token name must be');
    expect((await post(t, '/console/admin/tokens/999999/revoke', {}, root)).statusCode).toBe(404);

    const revoked = await post(t, `/console/admin/tokens/${token?.id ?? 0}/revoke`, {}, root);
    expect(revoked.headers.location).toBe('/console/admin/tokens?done=revoked');
    expect((await bearer()).statusCode).toBe(401);
    expect((await get(t, String(revoked.headers.location), root)).body).toContain('<span class="status-disabled">revoked</span>');

    const audit = await t.services.audit.list({ targetKind: 'operator-token', limit: 10 });
    expect(audit.map((r) => [r.action, r.actor.name])).toEqual([
      ['token.revoke', 'root'],
      ['token.create', 'root'],
    ]);
    expect(JSON.stringify(audit)).not.toContain(secret);

    // Customers have no tokens page.
    await t.account('alice', 5);
    expect((await get(t, '/console/admin/tokens', await customerSession('alice', 'alice-owner'))).statusCode).toBe(403);
  });

  it("logs out everywhere: every session of the user ends, another user's stays, and a post without the CSRF token ends nothing", async () => {
    await t.account('alice', 5);
    for (const [name, kind] of [
      ['root', 'operator'],
      ['alice-owner', 'customer'],
    ] as const) {
      const first = kind === 'operator' ? await operatorSession(name) : await customerSession('alice', name);
      const second = await consoleLogin(t, name);
      const home = kind === 'operator' ? '/console/admin' : '/console/account';
      const other = kind === 'operator' ? await operatorSession('other-op', 'viewer') : await customerSession('alice', 'alice-member', 'member');
      const otherHome = kind === 'operator' ? '/console/admin' : '/console/account';
      const page = await get(t, home, first);
      expect(page.body).toContain('formaction="/console/logout-everywhere">Log out everywhere</button>');

      expect((await post(t, '/console/logout-everywhere', {}, first, { csrf: false })).statusCode).toBe(403);
      expect((await get(t, home, second)).statusCode).toBe(200);

      const ended = await post(t, '/console/logout-everywhere', {}, first);
      expect(ended.statusCode).toBe(303);
      expect(ended.headers.location).toBe('/console/login?ended=1');
      expect(String(ended.headers['set-cookie'])).toMatch(/^vl_session=; /);
      for (const session of [first, second]) expect((await get(t, home, session)).headers.location).toBe(`/console/login?session=ended&next=${encodeURIComponent(home)}`);
      expect((await get(t, otherHome, other)).statusCode).toBe(200);
      expect((await get(t, '/console/login?ended=1')).body).toContain('Every session of yours has ended');
      expect((await t.services.audit.list({ action: 'user.logout-everywhere', target: name, limit: 5 })).map((r) => r.actor.name)).toEqual([name]);
    }
  });
});
