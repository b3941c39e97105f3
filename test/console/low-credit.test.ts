import { afterEach, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, get, type ConsoleSession } from './console-harness.js';

/** Issue 26 item 4: a customer at 0 credits (or below the lowest alert threshold) is told so, and how to get more. */
describe('console: an empty or low balance and the way to more credits', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  async function customer(credits: number, env: Record<string, string> = {}): Promise<ConsoleSession> {
    t = await createTestApp(env);
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', credits);
    const { inviteToken } = await users(t).createCustomer('acme', 'carla', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
    return consoleLogin(t, 'carla');
  }
  const notice = (body: string) => /data-testid="low-credit">([\s\S]*?)<\/div>/.exec(body)?.[1];

  it('at 0 credits the account page and Try it say so and to ask the operator', async () => {
    const s = await customer(0);
    for (const url of ['/console/account', '/console/account/try']) {
      const text = notice((await get(t, url, s)).body);
      expect(text, url).toContain('Your account has no credits left');
      expect(text, url).toContain('Ask your operator for more credits.');
    }
  });

  it('CONSOLE_TOPUP_URL is the way forward: a link, or the operator\'s own sentence', async () => {
    const s = await customer(0, { CONSOLE_TOPUP_URL: 'https://shop.example/credits?plan=a&b=1' });
    expect(notice((await get(t, '/console/account', s)).body)).toContain('<a href="https://shop.example/credits?plan=a&amp;b=1">Buy credits</a>');
    await t.close();
    const s2 = await customer(0, { CONSOLE_TOPUP_URL: 'Write to billing@example.com with your account name.' });
    expect(notice((await get(t, '/console/account/try', s2)).body)).toContain('Write to billing@example.com with your account name.');
  });

  it('below the lowest alert threshold it warns; above every threshold it says nothing', async () => {
    const s = await customer(5);
    const id = (await t.services.accounts.show('acme')).id;
    await t.services.alerting.alerts.setThresholds(id, [50, 10]);
    const low = notice((await get(t, '/console/account', s)).body);
    expect(low).toContain('Your balance is low');
    expect(low).toContain('5 credits, below your alert threshold of 10.');
    await t.services.alerting.alerts.setThresholds(id, [3]);
    expect(notice((await get(t, '/console/account', s)).body)).toBeUndefined();
  });
});
