import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BuiltApp } from '../../src/app.js';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { OPERATIONS } from '../../src/catalogue/operations.js';
import { RecordValidator } from '../../src/datasets/import/record-validator.js';
import { ManualRepeat } from '../helpers/manual-repeat.js';
import { enginesToTest } from '../helpers/engines.js';
import { tempDir } from '../helpers/test-app.js';
import { cli } from '../cli/cli-harness.js';
import { CARSXE_PLATES, CARSXE_VINS, FakeCarsxe } from '../fakes/fake-carsxe.js';
import { FakeUkvd, UKVD_PLATES } from '../fakes/fake-ukvd.js';
import { FakeVincario, VINCARIO_VINS } from '../fakes/fake-vincario.js';
import { eachBinding, fiveBindings } from '../upstream/paid-harness.js';
import { gatewayApp, sharedStore, type SharedStore } from './gateway-harness.js';

/**
 * Record and replay cover every paid upstream (issue 32): what UK Vehicle Data, Vincario and
 * CarsXE answered, recorded as it came (`<NAME>_RECORD_FILE`) or exported later from the upstream
 * cache (`export --source <name>`), imported into another store that has no upstream, answers the
 * same requests with the same bytes on all five bindings, each kept for the operation it answered.
 */

const validator = new RecordValidator(new Catalogue(OPERATIONS));

/** Every line of a file parses and is a valid import line. */
function importLines(path: string): Array<Record<string, unknown>> {
  const text = readFileSync(path, 'utf8');
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const value = JSON.parse(l) as Record<string, unknown>;
      const checked = validator.validate(value);
      if (!checked.ok) throw new Error(`not an import line: ${checked.reason}`);
      return value;
    });
}

type Request = readonly [operation: string, params: ReadonlyArray<readonly [string, string]>];

interface PaidCase {
  readonly name: 'ukvd' | 'vincario' | 'carsxe';
  /** The provider's settings against its fake, without the record file. */
  env(): Record<string, string>;
  /** Upstream calls the fake has received. */
  calls(): number;
  readonly requests: readonly Request[];
  /** Operations an export writes beside the recorded ones: those the same cached payload serves. */
  readonly exportedAlso: readonly string[];
}

const UKVD_KEY = 'ukvd-3f9a1c7e-5b2d-4f6a-8c0e-000000000042';
const VINCARIO_KEY = 'vincario-key-rr';
const VINCARIO_SECRET = 'vincario~secret.rr';
const CARSXE_KEY = 'carsxe-key-rr-0001';
let ukvd: FakeUkvd;
let vincario: FakeVincario;
let carsxe: FakeCarsxe;

beforeAll(async () => {
  ukvd = await FakeUkvd.start({ apiKey: UKVD_KEY, balance: 1000 });
  vincario = await FakeVincario.start({ apiKey: VINCARIO_KEY, secret: VINCARIO_SECRET, balance: { decode: 1000, 'stolen-check': 1000 } });
  carsxe = await FakeCarsxe.start({ apiKey: CARSXE_KEY });
});
afterAll(async () => {
  await ukvd.close();
  await vincario.close();
  await carsxe.close();
});

const CASES: readonly PaidCase[] = [
  {
    name: 'ukvd',
    env: () => ({ UKVD_API_KEY: UKVD_KEY, UKVD_BASE_URL: ukvd.baseUrl }),
    calls: () => ukvd.calls(),
    requests: [
      ['Check', [['RegistrationNumber', UKVD_PLATES.car]]],
      ['CheckUKMinimal', [['regNumber', UKVD_PLATES.partial]]],
      ['CheckMotorBikeUK', [['RegistrationNumber', UKVD_PLATES.motorbike]]],
      ['UKMOT', [['RegistrationNumber', UKVD_PLATES.car]]],
    ],
    // One vehicle package answer per plate serves the three UK vehicle operations from the cache.
    exportedAlso: ['Check', 'CheckMotorBikeUK', 'CheckUKMinimal'],
  },
  {
    name: 'vincario',
    env: () => ({ VINCARIO_API_KEY: VINCARIO_KEY, VINCARIO_SECRET, VINCARIO_BASE_URL: vincario.baseUrl }),
    calls: () => vincario.server.requests.length,
    requests: [
      ['VinCheck', [['Vin', VINCARIO_VINS.focus]]],
      ['CheckStolen', [['vinNumber', VINCARIO_VINS.stolen]]],
    ],
    exportedAlso: [],
  },
  {
    name: 'carsxe',
    env: () => ({ CARSXE_API_KEY: CARSXE_KEY, CARSXE_BASE_URL: carsxe.baseUrl }),
    calls: () => carsxe.server.requests.length,
    requests: [
      ['CheckUSA', [['RegistrationNumber', CARSXE_PLATES.us.plate], ['State', CARSXE_PLATES.us.state]]],
      ['CheckCanada', [['RegistrationNumber', CARSXE_PLATES.ca.plate], ['Province', CARSXE_PLATES.ca.state]]],
      ['VinCheck', [['Vin', CARSXE_VINS.bmw]]],
    ],
    // A US plate answer serves every US plate operation, a Canadian one CheckCanada.
    exportedAlso: ['CheckUSA', 'CheckUSAMinimal', 'CheckUSADynamic', 'CheckUSAEdBolian', 'CheckCanada'],
  },
];

describe.each(await enginesToTest())('record and replay of the paid upstreams on %s', (engine) => {
  let dir: ReturnType<typeof tempDir>;
  let stores: SharedStore[] = [];
  let apps: BuiltApp[] = [];
  beforeEach(() => {
    dir = tempDir();
    stores = [];
    apps = [];
  });
  afterEach(async () => {
    for (const app of apps) await app.app.close();
    for (const store of stores) await store.drop();
    dir.remove();
  });
  async function store(): Promise<SharedStore> {
    const s = await sharedStore(engine);
    stores.push(s);
    return s;
  }
  async function app(on: SharedStore, env: Record<string, string>): Promise<BuiltApp> {
    const built = await gatewayApp(on, env, new ManualRepeat().repeat);
    apps.push(built);
    return built;
  }
  /** Each request on the five bindings, as `alice` (HTTP Basic on every call), by request and binding. */
  async function ask(on: BuiltApp, requests: readonly Request[]): Promise<Map<string, string>> {
    const { apiKey } = await on.services.accounts.create('alice', 1000);
    const auth = `Basic ${Buffer.from(`alice:${apiKey}`).toString('base64')}`;
    const bodies = new Map<string, string>();
    for (const [operation, params] of requests) {
      for (const [binding, res] of eachBinding(await fiveBindings(on, operation, params, 'alice', auth))) {
        expect(res.statusCode, `${operation} ${binding}: ${res.body}`).toBe(200);
        bodies.set(`${operation} ${binding}`, res.body);
      }
    }
    return bodies;
  }

  for (const c of CASES) {
    it(`${c.name}: a fresh store that imports the record file, or the export, answers the same bytes on every binding without the provider`, async () => {
      const recordFile = join(dir.path, `${c.name}.jsonl`);
      const liveStore = await store();
      const live = await app(liveStore, { ...c.env(), [`${c.name.toUpperCase()}_RECORD_FILE`]: recordFile });
      const before = c.calls();
      const answers = await ask(live, c.requests);
      // One call per request: the other four bindings were cache hits, which are not recorded.
      expect(c.calls() - before).toBe(c.requests.length);

      const recorded = importLines(recordFile);
      expect(recorded.map((l) => l.operation)).toEqual(c.requests.map(([operation]) => operation));
      expect(recorded.every((l) => l.source === c.name && typeof l.fetchedAt === 'string')).toBe(true);

      const exported = await cli({ LOG_LEVEL: 'silent', ...liveStore.env }, ['export', '--source', c.name]);
      expect(exported.code, exported.err).toBe(0);
      const exportFile = join(dir.path, `${c.name}-export.jsonl`);
      writeFileSync(exportFile, `${exported.out}\n`);
      const lines = importLines(exportFile);
      expect(lines.every((l) => l.source === c.name)).toBe(true);
      // Every recorded answer is in the export, as the same line but for its time.
      const keyOf = (l: Record<string, unknown>): string => JSON.stringify([l.operation, l.key]);
      const exportedByKey = new Map(lines.map((l) => [keyOf(l), l]));
      for (const line of recorded) {
        const { fetchedAt: _at, ...rest } = exportedByKey.get(keyOf(line)) ?? {};
        const { fetchedAt: _recordedAt, ...expected } = line;
        expect(rest, keyOf(line)).toEqual(expected);
      }
      expect(new Set(lines.map((l) => l.operation))).toEqual(new Set([...c.requests.map(([operation]) => operation), ...c.exportedAlso]));

      for (const file of [recordFile, exportFile]) {
        const offlineStore = await store();
        const imported = await cli({ LOG_LEVEL: 'silent', ...offlineStore.env }, ['import', file]);
        expect(imported.code, imported.out + imported.err).toBe(0);
        const offline = await app(offlineStore, {});
        const calls = c.calls();
        const replayed = await ask(offline, c.requests);
        for (const [name, body] of answers) expect(replayed.get(name), `${name} from ${file}`).toBe(body);
        expect(c.calls()).toBe(calls);
        // Kept for the operation each answered (operation_records), none for a whole dataset.
        const sources = await offline.services.storage.db.selectFrom('operation_records').select('source').distinct().execute();
        expect(sources.map((s) => s.source)).toEqual([c.name]);
        expect(await offline.services.storage.db.selectFrom('records').select('dataset').execute()).toEqual([]);
      }
    });
  }
});
