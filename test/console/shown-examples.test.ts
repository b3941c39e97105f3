import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';
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

  /** The fields of Try it's run form as the page fills them: name -> value (entities decoded). */
  function filledFields(body: string): Record<string, string> {
    const fields: Record<string, string> = {};
    for (const m of body.matchAll(/<input type="text" id="p-[^"]*" name="([^"]+)" value="([^"]*)"/g)) fields[m[1] ?? ''] = text(m[2] ?? '');
    return fields;
  }

  async function customer(): Promise<ConsoleSession> {
    await t.account('dora', 500);
    const { inviteToken } = await users(t).createCustomer('dora', 'dora-owner', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
    return consoleLogin(t, 'dora-owner');
  }

  it('Try it fills every operation it offers with a sample key, and each runs with data on a fresh install (issue 26 item 6)', async () => {
    const s = await customer();
    const first = await get(t, '/console/account/try', s);
    const select = /<select id="t-operation" name="operation">([\s\S]*?)<\/select>/.exec(first.body)?.[1] ?? '';
    const offered = [...select.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(offered).toHaveLength(t.services.catalogue.operations.length);
    let ran = 0;
    for (const operation of offered) {
      const page = await get(t, `/console/account/try?operation=${operation}`, s);
      if (!page.body.includes('data-testid="sample"')) continue;
      const values = filledFields(page.body);
      expect(Object.values(values).some((v) => v !== ''), operation).toBe(true);
      const before = await t.services.accounts.balance('dora');
      const res = await post(t, '/console/account/try', { operation, shown: operation, ...values }, s);
      expect(res.statusCode, `${operation} ${JSON.stringify(values)}: ${/role="alert">([^<]*)/.exec(res.body)?.[1] ?? ''}`).toBe(200);
      expect(res.body, operation).toMatch(/data-testid="json-answer">[^<]*\S/);
      // Data, not an empty answer: a found record is charged its price.
      const cost = t.services.catalogue.find(operation)?.cost ?? 0;
      expect(await t.services.accounts.balance('dora'), operation).toBe(before - cost);
      ran += 1;
    }
    expect(ran).toBe(offered.length);
  }, 120_000);

  it('Try it groups the operations by country, then by VIN and by make and model, each option in one group', async () => {
    const body = (await get(t, '/console/account/try', await customer())).body;
    const select = /<select id="t-operation" name="operation">([\s\S]*?)<\/select>/.exec(body)?.[1] ?? '';
    const groups = [...select.matchAll(/<optgroup label="([^"]+)">([\s\S]*?)<\/optgroup>/g)].map((m) => ({ label: m[1] ?? '', options: [...(m[2] ?? '').matchAll(/<option value="([^"]+)"/g)].map((o) => o[1]) }));
    // Every option sits in a group: nothing is left between them.
    expect(select.replace(/<optgroup[\s\S]*?<\/optgroup>/g, '')).toBe('');
    expect(groups.flatMap((g) => g.options)).toHaveLength(t.services.catalogue.operations.length);
    const labels = groups.map((g) => g.label);
    expect(labels.slice(-2)).toEqual(['By VIN', 'By make and model']);
    expect(labels.slice(0, -2)).toEqual([...labels.slice(0, -2)].sort((a, b) => a.localeCompare(b, 'en')));
    const of = (label: string) => groups.find((g) => g.label === label)?.options;
    expect(of('UK')).toEqual(['Check', 'CheckMotorBikeUK', 'UKMOT', 'CheckUKMinimal', 'CheckPrice', 'IsInsured', 'CheckLondonTaxi']);
    expect(of('USA')).toEqual(['CheckUSA', 'CheckUSAMinimal', 'CheckUSADynamic', 'CheckUSAEdBolian']);
    expect(of('By VIN')).toEqual(['VinCheck', 'CheckStolen', 'CheckRecalledVIN']);
    expect(of('By make and model')).toEqual(['CarSpecifications', 'WheelSize', 'CheckEuroNCap']);
  });

  it('Try it fills in an operator’s test plate before the sample data, and says it is free', async () => {
    await t.services.testPlates.add('CheckUSA', '8MNK317|CA', SYSTEM_ACTOR);
    const s = await customer();
    const usa = await get(t, '/console/account/try?operation=CheckUSA', s);
    expect(filledFields(usa.body)).toEqual({ RegistrationNumber: '8MNK317', State: 'CA' });
    expect(usa.body).toMatch(/data-testid="sample" data-source="test-plate">Sample: RegistrationNumber <code>8MNK317<\/code>, State <code>CA<\/code> \(a test plate: free to look up\)/);
    const france = await get(t, '/console/account/try?operation=CheckFrance', s);
    expect(filledFields(france.body)).toEqual({ RegistrationNumber: 'FK482TR' });
    expect(france.body).toContain('data-source="sample"');
    // The free plate answers with data and costs nothing.
    const res = await post(t, '/console/account/try', { operation: 'CheckUSA', shown: 'CheckUSA', RegistrationNumber: '8MNK317', State: 'CA' }, s);
    expect(res.statusCode).toBe(200);
    expect(await t.services.accounts.balance('dora')).toBe(500);
  });
});
