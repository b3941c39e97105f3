import { registeredProvider } from '../../src/providers/provider-chains.js';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import type { OperationDeclaration } from '../../src/catalogue/operation.js';
import { buildQuery, type LookupQuery } from '../../src/lookup/lookup-query.js';
import type { Provider } from '../../src/lookup/provider.js';
import { upstreamLogListener } from '../../src/providers/upstream/upstream-log.js';
import { UpstreamMonitor } from '../../src/providers/upstream/upstream-monitor.js';
import { upstreamRegistrations } from '../../src/providers/upstream/upstream-registrations.js';
import { loadProviderConfig } from '../../src/config/provider-config.js';
import type { Clock } from '../../src/shared/clock.js';
import type { WaitClock } from '../../src/shared/wait-clock.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { FakeDvla } from '../fakes/fake-dvla.js';
import { FakeHttpServer } from '../fakes/fake-http-server.js';
import { FakeDvsaMot } from '../fakes/fake-dvsa-mot.js';
import { tempDir } from '../helpers/test-app.js';

/** Secrets the fakes accept; tests look for them in every log line and message. */
export const SECRETS = {
  dvlaKey: 'dvla-key-3f9a1c7e5b2d4f6a8c0e',
  dvsaClientId: 'client-id-7d2e4f6a-0b1c-4d3e',
  dvsaClientSecret: 'client~secret.Qw8_Er7Ty6Ui5Op4',
  dvsaKey: 'dvsa-key-9b8a7c6d5e4f3a2b1c0d',
  scope: 'https://tapi.dvsa.gov.uk/.default',
} as const;

/** An http URL on 127.0.0.1 where nothing listens (connection refused). */
export async function closedPortUrl(): Promise<string> {
  const server = await FakeHttpServer.start(() => ({ status: 200 }));
  const url = server.url;
  await server.close();
  return url;
}

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private ms = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** A pino logger at trace level whose output the test can read. */
export function captureLogger(): { logger: pino.Logger; text: () => string } {
  let out = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, stream), text: () => out };
}

const catalogue = new Catalogue();

/** The catalogue's declaration of an operation; throws if the catalogue has none by that name. */
export function declared(operation: string): OperationDeclaration {
  const op = catalogue.find(operation);
  if (!op) throw new Error(`${operation} is not in the catalogue`);
  return op;
}

/** A validated query, as the pipeline hands it to providers. */
export function query(operation: 'Check' | 'UKMOT', plate: string): LookupQuery {
  return buildQuery(declared(operation), { RegistrationNumber: plate });
}

/**
 * Environment pointing the providers at the fakes. The timeouts are real timers, so they are far
 * above what a fake takes to answer even on a busy machine; a test of a timeout sets a short one
 * against a fake that never answers.
 */
export function fakeEnv(fakes: { dvla?: FakeDvla; dvsa?: FakeDvsaMot }, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    ...(fakes.dvla ? { DVLA_API_KEY: SECRETS.dvlaKey, DVLA_BASE_URL: fakes.dvla.baseUrl, DVLA_TIMEOUT_MS: '10000', DVLA_BUDGET_MS: '20000' } : {}),
    ...(fakes.dvsa
      ? {
          DVSA_CLIENT_ID: SECRETS.dvsaClientId,
          DVSA_CLIENT_SECRET: SECRETS.dvsaClientSecret,
          DVSA_API_KEY: SECRETS.dvsaKey,
          DVSA_TOKEN_URL: fakes.dvsa.tokenUrl,
          DVSA_BASE_URL: fakes.dvsa.baseUrl,
          DVSA_TIMEOUT_MS: '10000',
          DVSA_BUDGET_MS: '20000',
        }
      : {}),
    ...overrides,
  };
}

export function startDvla(options: { retryAfter?: string; slowMs?: number } = {}): Promise<FakeDvla> {
  return FakeDvla.start({ apiKey: SECRETS.dvlaKey, ...options });
}

export function startDvsa(options: { expiresIn?: number; expiredTokenStatus?: 401 | 403; clientSecret?: string } = {}): Promise<FakeDvsaMot> {
  const { clientSecret, ...rest } = options;
  return FakeDvsaMot.start({ clientId: SECRETS.dvsaClientId, clientSecret: clientSecret ?? SECRETS.dvsaClientSecret, apiKey: SECRETS.dvsaKey, scope: SECRETS.scope, ...rest });
}

/** The upstream providers as services.ts builds them, on a store of their own, with a captured log. */
export interface UkProviders {
  readonly check: Provider;
  readonly ukmot: Provider | undefined;
  readonly monitor: UpstreamMonitor;
  readonly storage: Storage;
  readonly log: () => string;
  close(): Promise<void>;
}

/** `waitClock`: the HTTP clients' request budgets and retry pauses (real time when absent). */
export async function ukProviders(env: Record<string, string>, clock: Clock = new ManualClock(), storage?: Storage, waitClock?: WaitClock): Promise<UkProviders> {
  const dir = tempDir();
  const store = storage ?? (await openStorage({ dataDir: dir.path }));
  const monitor = new UpstreamMonitor(() => clock.now());
  const { logger, text } = captureLogger();
  monitor.subscribe(upstreamLogListener(logger));
  const registrations = upstreamRegistrations({ db: store.db, clock, config: loadProviderConfig(env), observer: { upstream: monitor }, waitClock });
  const find = (name: string): Provider | undefined => registrations.flatMap((r) => (r.operations.includes(name) ? [registeredProvider(r) ?? []].flat() : []))[0];
  const check = find('Check');
  if (!check) throw new Error('no Check provider registered');
  return {
    check,
    ukmot: find('UKMOT'),
    monitor,
    storage: store,
    log: text,
    async close() {
      if (!storage) await store.close();
      dir.remove();
    },
  };
}
