import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RESPONSE_EXCERPT_BYTES } from '../../src/webhooks/webhook-dispatcher.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { FakeHttpServer, type FakeResponse } from '../fakes/fake-http-server.js';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, get, post, type ConsoleSession } from './console-harness.js';

/**
 * Issue 26 item 15: an endpoint's delivery log shows each message's payload and each attempt's
 * answer (status and first bytes), offers Resend to writers, and says while something is pending
 * (the page's script follows it then; the browser test watches that).
 */
describe.each(await enginesToTest())('console: the webhook delivery log on %s', (engine) => {
  let t: TestApp;
  let receiver: FakeHttpServer;
  /** What the receiver answers next; each test sets it. */
  let answer: () => FakeResponse = () => ({ status: 204 });

  beforeEach(async () => {
    answer = () => ({ status: 204 });
    // The retry schedule is long: a failed attempt stays pending for the whole test.
    t = await createTestApp(await engineEnv(engine, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', CREDIT_ALERT_SWEEP_MS: '3600000', WEBHOOK_RETRY_SCHEDULE: '1h' }), undefined, engine);
    receiver = await FakeHttpServer.start(() => answer());
    await t.account('alice', 50);
  });
  afterEach(async () => {
    await receiver.close();
    await t.close();
  });

  async function customerSession(name: string, role: 'owner' | 'member' = 'owner'): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createCustomer('alice', name, role);
    await users(t).acceptInvite(inviteToken, PASSWORD);
    return consoleLogin(t, name);
  }
  const alice = async () => (await t.services.accounts.show('alice')).id;
  async function endpoint(owner: ConsoleSession): Promise<{ id: number; href: string }> {
    await post(t, '/console/account/webhooks', { url: `${receiver.url}/hooks`, 'event_credits.low': 'true' }, owner);
    const [created] = await t.services.alerting.webhooks.list({ actor: 'account', accountId: await alice() });
    const id = created?.id ?? 0;
    return { id, href: `/console/account/webhooks/${id}` };
  }
  const messages = async (id: number) => t.services.alerting.webhooks.messages({ actor: 'account', accountId: await alice() }, id);
  const pendingOf = (body: string) => /data-delivery-log data-pending="(true|false)"/.exec(body)?.[1];

  it("shows the payload pretty and escaped, and the receiver's status and first kilobyte, escaped and cut on a whole character", async () => {
    const owner = await customerSession('alice-owner');
    const { id, href } = await endpoint(owner);
    // An event whose data a person typed (an account's note, say): text, never markup.
    const accountId = await alice();
    await t.services.storage.transaction((tx) => t.services.alerting.webhooks.enqueue(tx, accountId, 'credits.low', { account: 'alice', note: '<script>alert(1)</script>' }));
    const errorPage = `<h1>Invalid signature</h1>${'é'.repeat(RESPONSE_EXCERPT_BYTES)}`;
    answer = () => ({ status: 400, text: errorPage, headers: { 'content-type': 'text/html' } });
    await t.services.alerting.dispatcher.drain();

    const [delivery] = await t.services.alerting.webhooks.deliveries({ actor: 'account', accountId: await alice() }, id);
    expect(delivery).toMatchObject({ attempt: 1, statusCode: 400, succeeded: false, error: 'HTTP 400' });
    // The first 1 KB: "<h1>...</h1>" is 26 bytes, each é two, so the last é that would be cut in two is left out.
    expect(delivery?.responseBody).toBe(`<h1>Invalid signature</h1>${'é'.repeat(Math.floor((RESPONSE_EXCERPT_BYTES - 26) / 2))}`);

    const page = await get(t, href, owner);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('<script>alert(1)');
    expect(page.body).not.toContain('<h1>Invalid signature');
    expect(page.body).toContain('<pre class="payload" data-testid="payload">{\n  &quot;type&quot;: &quot;credits.low&quot;,');
    expect(page.body).toContain('&quot;note&quot;: &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;');
    expect(page.body).toMatch(/<td class="num">1<\/td><td class="num">400<\/td><td class="num">\d+<\/td><td><span class="status-disabled">failed<\/span>: HTTP 400<\/td><td><pre class="answer">&lt;h1&gt;Invalid signature&lt;\/h1&gt;é+<\/pre><span class="muted">\(the first 1024 bytes\)<\/span><\/td>/);
    // Retried in an hour: pending, and the page says it follows it.
    expect(pendingOf(page.body)).toBe('true');
    expect(page.body).toContain('data-testid="pending-note"');
    expect(page.body).toMatch(/data-next-attempt="\d{4}-\d\d-\d\dT[\d:.]+Z"/);
  });

  it('resends a message: the same id and payload once more, audited; the log is pending until it is sent, then not', async () => {
    const owner = await customerSession('alice-owner');
    const { id, href } = await endpoint(owner);
    answer = () => ({ status: 200, json: { received: true } });
    await post(t, `${href}/test`, {}, owner);
    await t.services.alerting.dispatcher.drain();
    const [message] = await messages(id);
    expect(message?.status).toBe('delivered');
    const settled = await get(t, href, owner);
    expect(pendingOf(settled.body)).toBe('false');
    expect(settled.body).not.toContain('data-testid="pending-note"');
    expect(settled.body).toContain('<pre class="answer">{&quot;received&quot;:true}</pre>');
    const action = `${href}/messages/${message?.id ?? ''}/resend`;
    expect(settled.body).toContain(`<form method="post" action="${action}" class="row">`);

    // The receiver holds the resent attempt until the test lets it answer.
    let release: (answer: FakeResponse) => void = () => undefined;
    let arrived: () => void = () => undefined;
    const arrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    answer = () => {
      arrived();
      return { until: new Promise<FakeResponse>((resolve) => { release = resolve; }) };
    };
    const resent = await post(t, action, {}, owner);
    expect(resent.statusCode).toBe(303);
    expect(resent.headers.location).toBe(`${href}?done=resent`);
    const queued = await get(t, `${href}?done=resent`, owner);
    expect(queued.body).toContain('The message is queued again');
    expect(pendingOf(queued.body)).toBe('true');

    // While the attempt is in flight, a second resend is refused, not sent twice at once.
    const sending = t.services.alerting.dispatcher.drain();
    await arrival;
    const busy = await post(t, action, {}, owner);
    expect(busy.headers.location).toBe(`${href}?done=resend-in-flight`);
    expect((await get(t, String(busy.headers.location), owner)).body).toContain('That message is being sent right now');
    release({ status: 202, text: 'thanks' });
    await sending;

    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1]?.headers['webhook-id']).toBe(message?.id);
    expect(receiver.requests[1]?.body).toBe(receiver.requests[0]?.body);
    expect(await messages(id)).toMatchObject([{ id: message?.id, status: 'delivered', attempts: 2 }]);
    const after = await get(t, href, owner);
    expect(pendingOf(after.body)).toBe('false');
    expect(after.body).toMatch(/<td class="num">2<\/td><td class="num">202<\/td><td class="num">\d+<\/td><td><span class="status-active">delivered<\/span><\/td><td><pre class="answer">thanks<\/pre><\/td>/);
    const trail = await t.services.audit.list({ action: 'webhook.resend', limit: 5 });
    expect(trail.map((r) => [r.actor.name, r.target, r.after])).toEqual([['alice-owner', 'alice', { endpointId: id, messageId: message?.id }]]);
  });

  it("refuses a resend by a member, without the CSRF token, or of another endpoint's message, and sends nothing", async () => {
    const owner = await customerSession('alice-owner');
    const { id, href } = await endpoint(owner);
    await post(t, `${href}/test`, {}, owner);
    await t.services.alerting.dispatcher.drain();
    const [message] = await messages(id);
    const action = `${href}/messages/${message?.id ?? ''}/resend`;
    const member = await customerSession('alice-member', 'member');
    expect((await get(t, href, member)).body).not.toContain(action);
    expect((await post(t, action, {}, member)).statusCode).toBe(403);
    expect((await post(t, action, {}, owner, { csrf: false })).statusCode).toBe(403);
    // Bob's message through Alice's endpoint, or an unknown one: 404, as a missing endpoint answers.
    await t.account('bob', 10);
    const bob = (await t.services.accounts.show('bob')).id;
    const { endpoint: bobs } = await t.services.alerting.webhooks.create({ actor: 'account', accountId: bob }, { url: `${receiver.url}/bob` });
    const bobsMessage = await t.services.alerting.webhooks.sendTest({ actor: 'account', accountId: bob }, bobs.id);
    await t.services.alerting.dispatcher.drain();
    expect((await post(t, `${href}/messages/${bobsMessage.id}/resend`, {}, owner)).statusCode).toBe(404);
    expect((await post(t, `/console/account/webhooks/${bobs.id}/messages/${bobsMessage.id}/resend`, {}, owner)).statusCode).toBe(404);
    expect((await post(t, `${href}/messages/not-a-message/resend`, {}, owner)).statusCode).toBe(400);
    await t.services.alerting.dispatcher.drain();
    expect(receiver.requests).toHaveLength(2);
    expect(await t.services.audit.list({ action: 'webhook.resend', limit: 5 })).toEqual([]);

    // An operator resends from the account's page.
    const { inviteToken } = await users(t).createOperator('root', 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    const root = await consoleLogin(t, 'root');
    const operatorHref = `/console/admin/accounts/alice/webhooks/${id}`;
    expect((await get(t, operatorHref, root)).body).toContain(`action="${operatorHref}/messages/${message?.id ?? ''}/resend"`);
    expect((await post(t, `${operatorHref}/messages/${message?.id ?? ''}/resend`, {}, root)).headers.location).toBe(`${operatorHref}?done=resent`);
    await t.services.alerting.dispatcher.drain();
    expect(receiver.requests).toHaveLength(3);
    expect((await t.services.audit.list({ action: 'webhook.resend', limit: 5 })).map((r) => r.actor.name)).toEqual(['root']);
  });
});
