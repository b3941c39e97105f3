import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, get, post, type ConsoleSession } from './console-harness.js';

/** The text of an HTML fragment as a person copies it: entities decoded. */
function text(htmlText: string): string {
  return htmlText.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The `curl -u 'USER:KEY' URL` a page shows, split into its credentials and URL. */
function curlOf(body: string): { user: string; key: string; url: URL } {
  const shown = /data-testid="curl">([^<]+)</.exec(body)?.[1] ?? /<code>(curl [^<]+)<\/code>/.exec(body)?.[1];
  if (shown === undefined) throw new Error(`no curl example in ${body.slice(0, 300)}`);
  const match = /^curl -u '?([^:']+):([^' ]+)'? (\S+)$/.exec(text(shown).trim());
  if (!match) throw new Error(`not a curl -u command: ${shown}`);
  return { user: match[1] ?? '', key: match[2] ?? '', url: new URL(match[3] ?? '') };
}

/**
 * Every curl example the front page and the console print must work on a fresh install (issue 26,
 * item 1): the store holds only the bundled sample dataset, and each command is run as shown.
 */
describe('the curl examples the service prints work on a fresh install', () => {
  let t: TestApp;

  beforeEach(async () => {
    t = await createTestApp();
    const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    expect(summary.committed).toBe(true);
  });
  afterEach(async () => {
    await t.close();
  });

  async function run(example: { user: string; key: string; url: URL }): Promise<number> {
    const res = await t.app.inject({ url: `${example.url.pathname}${example.url.search}`, headers: { authorization: t.basic(example.user, example.key) } });
    return res.statusCode;
  }

  async function operator(): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createOperator('root', 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    return consoleLogin(t, 'root');
  }

  it('the front page example answers 200 once USERNAME and API_KEY are an account of the store', async () => {
    const apiKey = await t.account('alice', 5);
    const shown = curlOf((await get(t, '/')).body);
    expect(shown.user).toBe('USERNAME');
    expect(await run({ ...shown, user: 'alice', key: apiKey })).toBe(200);
  });

  it('the example shown after an operator creates an account answers 200 as shown', async () => {
    const created = await post(t, '/console/admin/accounts', { username: 'bob', credits: 3 }, await operator());
    expect(created.statusCode).toBe(201);
    expect(await run(curlOf(created.body))).toBe(200);
  });

  it('the examples shown after a customer creates and rolls a key answer 200 as shown', async () => {
    await t.account('carol', 5);
    const { inviteToken } = await users(t).createCustomer('carol', 'carol-owner', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
    const owner = await consoleLogin(t, 'carol-owner');
    const created = await post(t, '/console/account/keys', { name: 'production' }, owner);
    expect(created.statusCode).toBe(201);
    expect(await run(curlOf(created.body))).toBe(200);

    const page = await get(t, '/console/account', owner);
    const id = Number(/action="\/console\/account\/keys\/(\d+)\/roll"/.exec(page.body.slice(page.body.indexOf('production')))?.[1]);
    const rolled = await post(t, `/console/account/keys/${id}/roll`, {}, owner);
    expect(rolled.statusCode).toBe(200);
    expect(await run(curlOf(rolled.body))).toBe(200);
  });
});
