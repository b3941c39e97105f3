import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Alerting } from '../../src/alerts/alerting.js';
import type { WebhookScope } from '../../src/webhooks/webhook.service.js';
import { FakeHttpServer, type FakeRequest } from '../fakes/fake-http-server.js';
import { enginesToTest, type TestEngine } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { verifyStandardWebhook } from './standard-webhooks-verifier.js';

const VEHICLE = { Description: 'RENAULT CLIO', CarMake: { CurrentTextValue: 'RENAULT' }, CarModel: { CurrentTextValue: 'CLIO' } };

/**
 * Short waits so retries happen within a test: 4 attempts, 150 ms then 300 ms then 300 ms apart.
 * An attempt's timeout is far above any answer of the local receiver however busy the machine;
 * the test of a hanging receiver has an app of its own that gives up sooner.
 */
const FAST = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '150ms,300ms,300ms',
  WEBHOOK_TIMEOUT_MS: '10000',
  WEBHOOK_POLL_MS: '20',
  // The sweep runs only when a test calls it.
  CREDIT_ALERT_SWEEP_MS: '3600000',
  CREDIT_ALERT_THRESHOLDS: '3,1,0',
};

async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A port on 127.0.0.1 with nothing listening: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  await new Promise<void>((r) => server.close(() => { r(); }));
  return address.port;
}

interface Payload {
  type: string;
  timestamp: string;
  data: { account?: { id: number; username: string }; threshold?: number; balance?: number; endpointId?: number };
}

describe.each(await enginesToTest())('low-credit alerts by signed webhooks on %s', (engine: TestEngine) => {
  let t: TestApp;
  let receiver: FakeHttpServer;
  let alerting: Alerting;

  beforeEach(async () => {
    receiver = await FakeHttpServer.start(() => ({ status: 204 }));
    t = await createTestApp(FAST, undefined, engine);
    alerting = t.services.alerting;
    await t.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE }]);
  });
  afterEach(async () => {
    await t.close();
    await receiver.close();
  });

  async function accountWith(username: string, credits: number): Promise<{ id: number; auth: string }> {
    const key = await t.account(username, credits);
    const account = await t.services.accounts.show(username);
    return { id: account.id, auth: t.basic(username, key) };
  }

  async function lookup(auth: string): Promise<number> {
    const res = await t.app.inject({ method: 'GET', url: '/api/json.aspx/CheckFrance/AB123CD', headers: { authorization: auth } });
    return res.statusCode;
  }

  async function endpoint(scope: WebhookScope, url = `${receiver.url}/hook`): Promise<{ id: number; secret: string }> {
    const { endpoint: e, secret } = await alerting.webhooks.create(scope, { url, description: 'test receiver' });
    return { id: e.id, secret };
  }

  const payload = (r: FakeRequest): Payload => JSON.parse(r.body) as Payload;

  it('delivers one signed credits.low per threshold crossed, and credits.depleted at 0, each exactly once', async () => {
    const alice = await accountWith('alice', 5);
    const hook = await endpoint({ actor: 'account', accountId: alice.id });

    expect(await lookup(alice.auth)).toBe(200); // 5 -> 4
    expect(await lookup(alice.auth)).toBe(200); // 4 -> 3: crosses 3
    await until('the first delivery', () => receiver.requests.length === 1);
    expect(await lookup(alice.auth)).toBe(200); // 3 -> 2: no crossing
    await sleep(200);
    expect(receiver.requests).toHaveLength(1);

    const first = receiver.requests[0] as FakeRequest;
    expect(first.method).toBe('POST');
    expect(first.headers['content-type']).toBe('application/json');
    expect(verifyStandardWebhook([hook.secret], first.headers, first.body)).toEqual([0]);
    expect(first.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    expect(payload(first)).toMatchObject({ type: 'credits.low', data: { account: { id: alice.id, username: 'alice' }, threshold: 3, balance: 3 } });

    expect(await lookup(alice.auth)).toBe(200); // 2 -> 1: crosses 1
    expect(await lookup(alice.auth)).toBe(200); // 1 -> 0: crosses 0
    expect(await lookup(alice.auth)).toBe(500); // out of credit: no debit, no alert
    await until('three deliveries', () => receiver.requests.length === 3);
    await sleep(200);
    expect(receiver.requests).toHaveLength(3);
    const events = receiver.requests.map((r) => [payload(r).type, payload(r).data.threshold]).sort();
    expect(events).toEqual([
      ['credits.depleted', 0],
      ['credits.low', 1],
      ['credits.low', 3],
    ]);
    for (const r of receiver.requests) verifyStandardWebhook([hook.secret], r.headers, r.body);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(3);

    const log = await alerting.webhooks.deliveries({ actor: 'account', accountId: alice.id }, hook.id);
    expect(log).toHaveLength(3);
    expect(log.every((d) => d.attempt === 1 && d.statusCode === 204 && d.succeeded && d.error === null && d.durationMs >= 0)).toBe(true);
    expect((await alerting.alerts.thresholds(alice.id)).fired).toEqual([3, 1, 0]);
  });

  it('re-arms a threshold after a top-up takes the balance back above it, and not before', async () => {
    const bob = await accountWith('bob', 4);
    await endpoint({ actor: 'account', accountId: bob.id });
    await lookup(bob.auth); // 4 -> 3: fires 3
    await until('the first alert', () => receiver.requests.length === 1);

    await t.services.accounts.grantCredits({ account: 'bob', amount: 1 }); // 3 -> 4: above 3, re-arms it
    expect((await alerting.alerts.thresholds(bob.id)).fired).toEqual([]);
    await lookup(bob.auth); // 4 -> 3: fires again
    await until('the second alert', () => receiver.requests.length === 2);
    expect(receiver.requests.map((r) => payload(r).data.threshold)).toEqual([3, 3]);

    await lookup(bob.auth); // 3 -> 2
    await t.services.accounts.grantCredits({ account: 'bob', amount: 1 }); // 2 -> 3: not above 3, stays fired
    await lookup(bob.auth); // 3 -> 2: no crossing of a fired threshold
    await sleep(300);
    expect(receiver.requests).toHaveLength(2);
  });

  it('retries after 500 answers with the back-off of the schedule, keeping the message id, until delivered', async () => {
    const carol = await accountWith('carol', 10);
    const hook = await endpoint({ actor: 'account', accountId: carol.id });
    receiver.script({ status: 500, text: 'boom' }, { status: 503 });
    const message = await alerting.webhooks.sendTest({ actor: 'account', accountId: carol.id }, hook.id);
    await until('the third attempt', () => receiver.requests.length === 3);
    await until('the message to settle', async () => (await alerting.repository.message(message.id))?.status === 'delivered');

    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([message.id]));
    for (const r of receiver.requests) verifyStandardWebhook([hook.secret], r.headers, r.body);
    const log = (await alerting.webhooks.deliveries({ actor: 'account', accountId: carol.id }, hook.id)).reverse();
    expect(log.map((d) => [d.attempt, d.statusCode, d.succeeded, d.error])).toEqual([
      [1, 500, false, 'HTTP 500'],
      [2, 503, false, 'HTTP 503'],
      [3, 204, true, null],
    ]);
    const started = log.map((d) => Date.parse(d.startedAt));
    expect((started[1] ?? 0) - (started[0] ?? 0)).toBeGreaterThanOrEqual(150);
    expect((started[2] ?? 0) - (started[1] ?? 0)).toBeGreaterThanOrEqual(300);
  });

  it('gives up after the last attempt when the connection is refused every time, logging each attempt', async () => {
    const dave = await accountWith('dave', 10);
    const hook = await endpoint({ actor: 'account', accountId: dave.id }, `http://127.0.0.1:${await closedPort()}/hook`);
    const message = await alerting.webhooks.sendTest({ actor: 'account', accountId: dave.id }, hook.id);
    await until('the message to fail for good', async () => (await alerting.repository.message(message.id))?.status === 'failed');
    const log = (await alerting.webhooks.deliveries({ actor: 'account', accountId: dave.id }, hook.id)).reverse();
    expect(log.map((d) => d.attempt)).toEqual([1, 2, 3, 4]);
    expect(log.every((d) => !d.succeeded && d.statusCode === null && d.error?.startsWith('ECONNREFUSED') === true)).toBe(true);
    const started = log.map((d) => Date.parse(d.startedAt));
    expect((started[1] ?? 0) - (started[0] ?? 0)).toBeGreaterThanOrEqual(150);
    expect((started[3] ?? 0) - (started[2] ?? 0)).toBeGreaterThanOrEqual(300);
    expect((await alerting.repository.message(message.id))?.attempts).toBe(4);
  });

  it('times out a receiver that hangs, logs it, and delivers on the retry', async () => {
    // An app of its own whose attempts give up at 500 ms: only the hanging answer is raced.
    const impatient = await createTestApp({ ...FAST, WEBHOOK_TIMEOUT_MS: '500' }, undefined, engine);
    try {
      await impatient.account('erin', 10);
      const scope: WebhookScope = { actor: 'account', accountId: (await impatient.services.accounts.show('erin')).id };
      const { endpoint: hook } = await impatient.services.alerting.webhooks.create(scope, { url: `${receiver.url}/hook` });
      receiver.script({ hang: true });
      const message = await impatient.services.alerting.webhooks.sendTest(scope, hook.id);
      await until('delivery after the timeout', async () => (await impatient.services.alerting.repository.message(message.id))?.status === 'delivered');
      const log = (await impatient.services.alerting.webhooks.deliveries(scope, hook.id)).reverse();
      expect(log.map((d) => [d.attempt, d.succeeded, d.error])).toEqual([
        [1, false, 'timed out after 500 ms'],
        [2, true, null],
      ]);
      expect(log[0]?.durationMs).toBeGreaterThanOrEqual(490);
      expect(receiver.requests).toHaveLength(2);
    } finally {
      await impatient.close();
    }
  });

  it('signs with both secrets during a rotation grace period, and only the new one after', async () => {
    const fay = await accountWith('fay', 10);
    const scope: WebhookScope = { actor: 'account', accountId: fay.id };
    const hook = await endpoint(scope);
    const rotated = await alerting.webhooks.rotateSecret(scope, hook.id, 3600);
    expect(rotated.secret).not.toBe(hook.secret);
    expect(rotated.endpoint.previousSecretUntil).not.toBeNull();
    await alerting.webhooks.sendTest(scope, hook.id);
    await until('the test event', () => receiver.requests.length === 1);
    const during = receiver.requests[0] as FakeRequest;
    expect(during.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verifyStandardWebhook([rotated.secret, hook.secret], during.headers, during.body)).toEqual([0, 1]);

    const again = await alerting.webhooks.rotateSecret(scope, hook.id, 0);
    await alerting.webhooks.sendTest(scope, hook.id);
    await until('the second test event', () => receiver.requests.length === 2);
    const after = receiver.requests[1] as FakeRequest;
    expect(after.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(verifyStandardWebhook([again.secret, rotated.secret, hook.secret], after.headers, after.body)).toEqual([0]);
  });

  it('test-send delivers a signed test event to that endpoint only, and logs it', async () => {
    const gus = await accountWith('gus', 10);
    const scope: WebhookScope = { actor: 'account', accountId: gus.id };
    const hook = await endpoint(scope);
    await endpoint(scope, `${receiver.url}/other`);
    const message = await alerting.webhooks.sendTest(scope, hook.id);
    await until('the test event', () => receiver.requests.length === 1);
    await sleep(150);
    expect(receiver.requests.map((r) => r.path)).toEqual(['/hook']);
    const request = receiver.requests[0] as FakeRequest;
    verifyStandardWebhook([hook.secret], request.headers, request.body);
    expect(payload(request)).toMatchObject({ type: 'test', data: { endpointId: hook.id } });
    expect(request.headers['webhook-id']).toBe(message.id);
    await until('the log row', async () => (await alerting.webhooks.deliveries(scope, hook.id)).length === 1);
  });

  it('sends nothing to a disabled endpoint, and tells the operator endpoint about every account', async () => {
    const hal = await accountWith('hal', 2);
    const own = await endpoint({ actor: 'account', accountId: hal.id }, `${receiver.url}/own`);
    await alerting.webhooks.update({ actor: 'account', accountId: hal.id }, own.id, { enabled: false });
    const operator = await endpoint({ actor: 'operator', accountId: null }, `${receiver.url}/operator`);
    await lookup(hal.auth); // 2 -> 1: crosses 1
    await until('the operator alert', () => receiver.requests.length === 1);
    await sleep(200);
    expect(receiver.requests.map((r) => r.path)).toEqual(['/operator']);
    const request = receiver.requests[0] as FakeRequest;
    verifyStandardWebhook([operator.secret], request.headers, request.body);
    expect(payload(request).data).toMatchObject({ account: { username: 'hal' }, threshold: 1 });
  });

  it('the sweep finds a crossing the lookup path never put in the outbox, and never sends one twice', async () => {
    const ivy = await accountWith('ivy', 4);
    await endpoint({ actor: 'account', accountId: ivy.id });
    expect(await alerting.alerts.sweep()).toBe(0); // the first round starts at the end of the ledger

    // A debit committed with no alert after it: what a crash right after the COMMIT leaves.
    const { CreditLedgerRepository } = await import('../../src/credits/credit-ledger.repository.js');
    const ledger = new CreditLedgerRepository(t.services.storage.db);
    await t.services.storage.transaction((tx) => ledger.debit(tx, ivy.id, 1, { operation: 'CheckFrance', interface: 'json', query: 'AB123CD', requestId: 'crash', createdAt: new Date().toISOString() }));
    await sleep(150);
    expect(receiver.requests).toHaveLength(0);

    expect(await alerting.alerts.sweep()).toBe(1);
    await until('the recovered alert', () => receiver.requests.length === 1);
    expect(payload(receiver.requests[0] as FakeRequest).data).toMatchObject({ threshold: 3, balance: 3 });

    await lookup((await accountWith('ivy2', 0)).auth); // unrelated traffic
    expect(await alerting.alerts.sweep()).toBe(0);
    await lookup(ivy.auth); // 3 -> 2
    await lookup(ivy.auth); // 2 -> 1: the lookup path fires 1
    await until('the lookup-path alert', () => receiver.requests.length === 2);
    expect(await alerting.alerts.sweep()).toBe(0);
    await sleep(150);
    expect(receiver.requests).toHaveLength(2);
  });

  it('the sweep writes nothing to a store whose ledger is empty, and later reads that ledger from its start', async () => {
    expect(await alerting.alerts.sweep()).toBe(0);
    expect(await t.services.storage.db.selectFrom('credit_alert_cursor').selectAll().execute()).toEqual([]);
    const mo = await accountWith('mo', 0);
    await endpoint({ actor: 'account', accountId: mo.id });
    await t.services.accounts.grantCredits({ account: 'mo', amount: 4 });
    const { CreditLedgerRepository } = await import('../../src/credits/credit-ledger.repository.js');
    const ledger = new CreditLedgerRepository(t.services.storage.db);
    await t.services.storage.transaction((tx) => ledger.debit(tx, mo.id, 1, { operation: 'CheckFrance', interface: 'json', query: 'AB123CD', requestId: 'crash', createdAt: new Date().toISOString() }));
    expect(await alerting.alerts.sweep()).toBe(1);
    await until('the recovered alert', () => receiver.requests.length === 1);
  });

  it('fires credits.depleted at 0 whatever the thresholds: "7, 3" reaching 0 (issue 26 item 14)', async () => {
    const kim = await accountWith('kim', 2);
    await endpoint({ actor: 'account', accountId: kim.id });
    await alerting.alerts.setThresholds(kim.id, [7, 3]);
    expect(await lookup(kim.auth)).toBe(200); // 2 -> 1
    expect(await lookup(kim.auth)).toBe(200); // 1 -> 0: depleted
    await until('the depleted alert', () => receiver.requests.length === 1);
    expect(payload(receiver.requests[0] as FakeRequest)).toMatchObject({ type: 'credits.depleted', data: { threshold: 0, balance: 0 } });
  });

  it('uses an account’s own thresholds instead of the server default', async () => {
    const jo = await accountWith('jo', 10);
    await endpoint({ actor: 'account', accountId: jo.id });
    expect(await alerting.alerts.setThresholds(jo.id, [8, 9, 8])).toMatchObject({ thresholds: [9, 8], custom: true });
    await lookup(jo.auth); // 10 -> 9: crosses 9
    await lookup(jo.auth); // 9 -> 8: crosses 8
    await until('two alerts', () => receiver.requests.length === 2);
    expect(receiver.requests.map((r) => payload(r).data.threshold).sort()).toEqual([8, 9]);
    expect(await alerting.alerts.setThresholds(jo.id, null)).toMatchObject({ thresholds: [3, 1, 0], custom: false, fired: [] });
  });

  it('one instance sends a message at a time: two senders on one store deliver each message once', async () => {
    const kim = await accountWith('kim', 10);
    const scope: WebhookScope = { actor: 'account', accountId: kim.id };
    const hook = await endpoint(scope);
    await alerting.dispatcher.close(); // only the two senders below run
    const ids: string[] = [];
    for (let i = 0; i < 24; i += 1) ids.push((await alerting.webhooks.sendTest(scope, hook.id)).id);
    const { WebhookDispatcher } = await import('../../src/webhooks/webhook-dispatcher.js');
    const { systemClock } = await import('../../src/shared/clock.js');
    const options = { retryScheduleMs: [60_000], timeoutMs: 2000, pollMs: 60_000, allowPrivateUrls: true, concurrency: 4 };
    const a = new WebhookDispatcher(alerting.repository, t.services.storage, systemClock, options);
    const b = new WebhookDispatcher(alerting.repository, t.services.storage, systemClock, options);
    // A claim takes at most its batch, even while another claimer holds rows.
    const claim = await alerting.repository.claimDue('probe', new Date().toISOString(), new Date(0).toISOString(), 4);
    expect(claim).toHaveLength(4);
    const [sentA, sentB] = await Promise.all([a.drain(), b.drain()]);
    // The probe's 4 had a lease that ended at once (1970), so the senders took them over.
    expect(sentA + sentB).toBe(24);
    expect(sentA).toBeGreaterThan(0);
    expect(sentB).toBeGreaterThan(0);
    expect(receiver.requests.map((r) => r.headers['webhook-id']).sort()).toEqual([...ids].sort());
  });

  it('on close, ends an attempt in flight and records it before the store closes, so it is retried', async () => {
    const own = await createTestApp({ ...FAST, WEBHOOK_TIMEOUT_MS: '20000' }, undefined, engine);
    try {
      await own.account('ned', 5);
      const ned = (await own.services.accounts.show('ned')).id;
      receiver.script({ hang: true });
      const scope: WebhookScope = { actor: 'account', accountId: ned };
      const { endpoint: e } = await own.services.alerting.webhooks.create(scope, { url: `${receiver.url}/hang` });
      const message = await own.services.alerting.webhooks.sendTest(scope, e.id);
      await until('the hanging attempt', () => receiver.requests.length === 1);
      await own.app.close();
      // The store the app closed, opened again: the ended attempt is in the log, and the message is due again.
      const { openStorage } = await import('../../src/storage/create-database.js');
      const reopened = await openStorage({ dataDir: own.dataDir, databaseUrl: own.config.databaseUrl });
      try {
        const deliveries = await reopened.db.selectFrom('webhook_deliveries').select(['message_id', 'error', 'succeeded']).execute();
        expect(deliveries).toEqual([{ message_id: message.id, error: expect.stringContaining('shutting down') as unknown, succeeded: 0 }]);
        const row = await reopened.db.selectFrom('webhook_messages').select(['status', 'lease_owner']).where('id', '=', message.id).executeTakeFirstOrThrow();
        expect(row).toEqual({ status: 'pending', lease_owner: null });
      } finally {
        await reopened.close();
      }
    } finally {
      await own.close();
    }
  });

  // Storage.skipLocked: SQLite has one writer at a time, so only PostgreSQL has claims that overlap.
  it.runIf(engine === 'postgres')('a claim passes over a message another claimer holds locked instead of waiting for its transaction', async () => {
    const kit = await accountWith('kit', 10);
    const scope: WebhookScope = { actor: 'account', accountId: kit.id };
    const hook = await endpoint(scope);
    await alerting.dispatcher.close(); // only the claims below run
    const held = await alerting.webhooks.sendTest(scope, hook.id);
    const free = await alerting.webhooks.sendTest(scope, hook.id);
    const { sql } = await import('kysely');
    let release = (): void => undefined;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked = (): void => undefined;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const holder = t.services.storage.transaction(async (tx) => {
      await sql`select id from webhook_messages where id = ${held.id} for update`.execute(tx.db);
      locked();
      await released;
    });
    try {
      await isLocked;
      const now = new Date();
      const claim = alerting.repository.claimDue('probe', now.toISOString(), new Date(now.getTime() + 60_000).toISOString(), 10);
      // The lock is let go only after the claim has answered: a claim that waited for it would
      // never answer (and the test would time out), however fast or slow the machine.
      expect((await claim).map((m) => m.id)).toEqual([free.id]);
    } finally {
      release();
      await holder;
    }
  });

  it('never makes a lookup wait for a delivery: lookups answer while a receiver hangs', async () => {
    // An app whose attempts may hang for 20 s, so every lookup below runs inside one attempt.
    const slow = await createTestApp({ ...FAST, WEBHOOK_TIMEOUT_MS: '20000' }, undefined, engine);
    try {
      await slow.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE }]);
      const key = await slow.account('lee', 30);
      const lee = await slow.services.accounts.show('lee');
      const auth = slow.basic('lee', key);
      receiver.script({ hang: true }, { hang: true });
      await slow.services.alerting.webhooks.create({ actor: 'account', accountId: lee.id }, { url: `${receiver.url}/hang` });
      await slow.services.alerting.alerts.setThresholds(lee.id, [29, 28]);
      const get = async (): Promise<number> =>
        (await slow.app.inject({ method: 'GET', url: '/api/json.aspx/CheckFrance/AB123CD', headers: { authorization: auth } })).statusCode;

      expect(await get()).toBe(200); // 30 -> 29: crosses 29
      await until('the hanging attempt', () => receiver.requests.length === 1);
      for (let i = 0; i < 10; i += 1) expect(await get()).toBe(200); // 29 -> 28 crosses 28: a second hanging attempt
      await until('the second hanging attempt', () => receiver.requests.length === 2);
      // Both attempts are still in flight (they hang for 20 s): nothing was logged, yet every lookup
      // was answered. A lookup that waited for a delivery would come after its attempt had ended.
      expect(await slow.services.alerting.webhooks.deliveries({ actor: 'account', accountId: lee.id }, 1)).toHaveLength(0);
      expect((await slow.services.accounts.show('lee')).credits).toBe(19);
    } finally {
      await slow.close();
    }
  });
});
