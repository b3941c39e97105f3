import { registeredProvider } from '../../src/providers/provider-chains.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQuery } from '../../src/lookup/lookup-query.js';
import { resultOf, type ResultType } from '../../src/results/index.js';
import { readAnswer } from '../../src/providers/regcheck/regcheck.client.js';
import { writeHttpResult } from '../../src/http/lookup/asmx-http/asmx-http.plugin.js';
import { RESULT_CODECS } from '../../src/results/index.js';
import { answerText, BESPOKE_NS, FakeRegcheck, fixtureOf, REG_NS, REGCHECK_FIXTURES } from '../fakes/fake-regcheck.js';
import { declared, ManualClock } from './harness.js';
import { UpstreamMonitor } from '../../src/providers/upstream/upstream-monitor.js';
import { upstreamRegistrations } from '../../src/providers/upstream/upstream-registrations.js';
import { loadProviderConfig } from '../../src/config/provider-config.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { tempDir } from '../helpers/test-app.js';
import type { Provider } from '../../src/lookup/provider.js';

/**
 * Each result type's reader (ResultCodec.fromXml) reads the original's GET answer back into the
 * record its writer writes: re-served on the GET binding, the record gives the original's bytes.
 */
describe('the codecs read the original GET answers back', () => {
  it('has a fake answer for every result type', () => {
    expect(new Set(REGCHECK_FIXTURES.map((f) => f.resultType))).toEqual(new Set(Object.keys(RESULT_CODECS)));
  });

  for (const fixture of REGCHECK_FIXTURES) {
    it(`${fixture.operation} (${fixture.resultType}): the record re-served over GET is the original's answer byte for byte`, () => {
      const op = declared(fixture.operation);
      const text = answerText(fixture);
      const record = readAnswer(op, text);
      const result = resultOf(op.resultType, JSON.parse(JSON.stringify(record)) as unknown, { operation: op, baseUrl: 'https://gateway.example' });
      expect(writeHttpResult(result, fixture.service === 'reg' ? REG_NS : BESPOKE_NS)).toBe(text);
    });
  }

  it('refuses an answer of another result type, another namespace or an unknown element', () => {
    const check = declared('Check');
    const text = answerText(fixtureOf('Check'));
    expect(() => readAnswer(check, text.replace(REG_NS, BESPOKE_NS))).toThrow(/not a Vehicle/);
    expect(() => readAnswer(declared('CheckPrice'), text)).toThrow(/not a Valuation/);
    expect(() => readAnswer(check, text.replace('<Description>', '<Colour>x</Colour><Description>'))).toThrow(/unexpected element Colour/);
    expect(() => readAnswer(check, text.replace(/<vehicleJson>[^<]*<\/vehicleJson>/, '<vehicleJson>not json</vehicleJson>'))).toThrow(/vehicleJson/);
    expect(() => readAnswer(check, `<!DOCTYPE x [<!ENTITY a "b">]>${text.slice(text.indexOf('<Vehicle'))}`)).toThrow(/DTD/);
  });
});

describe('the regcheck provider over the fake GET binding', () => {
  let fake: FakeRegcheck;
  let storage: Storage;
  const dir = tempDir();
  let providerFor: (operation: string) => Provider;

  beforeAll(async () => {
    fake = await FakeRegcheck.start({ username: 'op-user' });
    storage = await openStorage({ dataDir: dir.path });
    const clock = new ManualClock();
    const config = loadProviderConfig({ REGCHECK_USERNAME: 'op-user', REGCHECK_BASE_URL: fake.baseUrl, REGCHECK_TIMEOUT_MS: '2000', REGCHECK_BUDGET_MS: '2000', REGCHECK_BREAKER_FAILURES: '100' });
    const registrations = upstreamRegistrations({ db: storage.db, clock, config, observer: { upstream: new UpstreamMonitor(() => clock.now()) } });
    providerFor = (operation) => {
      const found = registrations.flatMap((r) => (r.operations.includes(operation) ? [registeredProvider(r) ?? []].flat() : []))[0];
      if (!found) throw new Error(`no provider for ${operation}`);
      return found;
    };
  });
  afterAll(async () => {
    await fake.close();
    await storage.close();
    dir.remove();
  });

  for (const fixture of REGCHECK_FIXTURES) {
    it(`asks ${fixture.service === 'reg' ? 'reg.asmx' : 'bespokeapi.asmx'}/${fixture.operation} and answers its record (${fixture.resultType as ResultType})`, async () => {
      const op = declared(fixture.operation);
      const before = fake.calls(fixture.operation);
      const answer = await providerFor(fixture.operation).find(buildQuery(op, Object.fromEntries(fixture.params)));
      expect(answer).toEqual({ status: 'found', record: readAnswer(op, answerText(fixture)), source: 'regcheck', via: 'upstream' });
      expect(fake.calls(fixture.operation)).toBe(before + 1);
      const path = fixture.service === 'reg' ? '/api/reg.asmx/' : '/api/bespokeapi.asmx/';
      expect(fake.server.requests.at(-1)?.path).toBe(`${path}${fixture.operation}`);
    });
  }
});

describe('what the operator side plugs into the regcheck provider', () => {
  it('tells its record sink once per upstream call (never for a cache hit), and asks nothing while refuse gives a reason', async () => {
    const fake = await FakeRegcheck.start({ username: 'op-user' });
    const dir = tempDir();
    const storage = await openStorage({ dataDir: dir.path });
    try {
      const clock = new ManualClock();
      const fetched: unknown[] = [];
      let closed: string | undefined = 'no balance left at the original';
      const config = loadProviderConfig({ REGCHECK_USERNAME: 'op-user', REGCHECK_BASE_URL: fake.baseUrl, REGCHECK_TIMEOUT_MS: '2000', REGCHECK_BUDGET_MS: '2000' });
      const [registration] = upstreamRegistrations({
        db: storage.db, clock, config, observer: { upstream: new UpstreamMonitor(() => clock.now()) },
        regcheckHooks: { refuse: () => closed },
        recordings: { of: (name) => (name === 'regcheck' ? { fetched: (cacheKey, payload, operation) => fetched.push({ cacheKey, payload, operation }) } : undefined) },
      });
      const provider = registration ? registeredProvider(registration) : undefined;
      if (!provider) throw new Error('no regcheck provider');
      const query = buildQuery(declared('Check'), { RegistrationNumber: 'LV04XYZ' });
      expect(await provider.find(query)).toEqual({ status: 'unavailable', reason: 'regcheck: no balance left at the original' });
      expect(fake.calls()).toBe(0);
      closed = undefined;
      const answers = await Promise.all([provider.find(query), provider.find(query), provider.find(query)]);
      expect(answers.map((a) => a.status)).toEqual(['found', 'found', 'found']);
      await provider.find(query);
      expect(fake.calls()).toBe(1);
      const payload = { operation: 'Check', key: { RegistrationNumber: 'LV04XYZ' }, record: readAnswer(declared('Check'), answerText(fixtureOf('Check'))) };
      expect(fetched).toEqual([{ cacheKey: 'Check|LV04XYZ', payload, operation: 'Check' }]);
    } finally {
      await fake.close();
      await storage.close();
      dir.remove();
    }
  });
});
