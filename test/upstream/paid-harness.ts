import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { registeredProvider } from '../../src/providers/provider-chains.js';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { buildQuery, type LookupQuery } from '../../src/lookup/lookup-query.js';
import type { Provider } from '../../src/lookup/provider.js';
import { SERVICES } from '../../src/catalogue/services.js';
import { loadProviderConfig } from '../../src/config/provider-config.js';
import { upstreamLogListener } from '../../src/providers/upstream/upstream-log.js';
import { UpstreamMonitor } from '../../src/providers/upstream/upstream-monitor.js';
import { upstreamRegistrations } from '../../src/providers/upstream/upstream-registrations.js';
import type { Clock } from '../../src/shared/clock.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { readXml, type XmlElement } from '../../src/xml/xml-reader.js';
import type { TestEngine } from '../helpers/engines.js';
import { createTestApp, tempDir, type TestApp } from '../helpers/test-app.js';
import { captureLogger, declared, ManualClock } from './harness.js';

/**
 * What the paid-provider suites (ukvd, vincario, carsxe) share: their fake's life and the
 * providers and apps each test opens (`paidSuite`), the providers as the app registers them, on a
 * store of their own with a captured log, and the five bindings of one lookup.
 */

/** As the clients send (paid-request.ts): a keep-alive socket these direct calls left in the pool would carry the app's next call. */
export const CLOSE = { headers: { connection: 'close' } };

export interface PaidProviders {
  /** The provider named `name` registered for `operation`. */
  provider(operation: string, name: string): Provider;
  readonly monitor: UpstreamMonitor;
  readonly storage: Storage;
  readonly log: () => string;
  close(): Promise<void>;
}

export async function paidProviders(env: Record<string, string>, clock: Clock = new ManualClock()): Promise<PaidProviders> {
  const dir = tempDir();
  const storage = await openStorage({ dataDir: dir.path });
  const monitor = new UpstreamMonitor(() => clock.now());
  const { logger, text } = captureLogger();
  monitor.subscribe(upstreamLogListener(logger));
  const registrations = upstreamRegistrations({ db: storage.db, clock, config: loadProviderConfig(env), observer: { upstream: monitor } });
  let closed = false;
  return {
    provider(operation, name) {
      const found = registrations.flatMap((r) => (r.operations.includes(operation) ? [registeredProvider(r) ?? []].flat() : [])).find((p) => p.name === name);
      if (!found) throw new Error(`no ${name} provider registered for ${operation}`);
      return found;
    },
    monitor,
    storage,
    log: text,
    async close() {
      if (closed) return;
      closed = true;
      await storage.close();
      dir.remove();
    },
  };
}

/** A paid upstream's fake, as `paidSuite` drives it. */
export interface PaidFake {
  readonly baseUrl: string;
  readonly server: { reset(): void };
  close(): Promise<void>;
}

/** One suite's fake, and the providers and apps its tests open on it. */
export interface PaidSuite<F extends PaidFake> {
  /** Started before the suite's first test, reset before each, closed after the last. */
  readonly fake: F;
  /** The providers on the suite's settings (`env` of its fake) with `overrides`, closed after the test. */
  providers(overrides?: Record<string, string>): Promise<PaidProviders>;
  /** An app on the suite's settings with `overrides`, and `engine`, closed after the test. */
  app(overrides?: Record<string, string>, engine?: TestEngine): Promise<TestApp>;
}

/**
 * Registers the hooks of a paid-provider suite: `start` the fake before all, `reset` it (its
 * scripted answers, and whatever `reset` adds) before each test, close what the test opened after it.
 */
export function paidSuite<F extends PaidFake>(setup: { start(): Promise<F>; env(fake: F): Record<string, string>; reset?(fake: F): void }): PaidSuite<F> {
  let fake: F | undefined;
  const opened: PaidProviders[] = [];
  const apps: TestApp[] = [];
  const started = (): F => {
    if (!fake) throw new Error('the fake starts in beforeAll: use it inside a test or hook');
    return fake;
  };
  beforeAll(async () => {
    fake = await setup.start();
  });
  afterAll(async () => fake?.close());
  beforeEach(() => {
    started().server.reset();
    setup.reset?.(started());
  });
  afterEach(async () => {
    for (const p of opened.splice(0)) await p.close();
    for (const t of apps.splice(0)) await t.close();
  });
  const env = (overrides: Record<string, string> = {}): Record<string, string> => ({ ...setup.env(started()), ...overrides });
  return {
    get fake() {
      return started();
    },
    async providers(overrides) {
      const p = await paidProviders(env(overrides));
      opened.push(p);
      return p;
    },
    async app(overrides, engine) {
      const t = await createTestApp(env(overrides), undefined, engine);
      apps.push(t);
      return t;
    },
  };
}

/** The five answers of `fiveBindings` by binding name. */
export function eachBinding(b: Bindings): Array<[string, { statusCode: number; body: string }]> {
  return [['get', b.get], ['post', b.post], ['soap11', b.soap11], ['soap12', b.soap12], ['json', b.json]];
}

/** A validated query of any operation, from its parameters by name. */
export function queryOf(operation: string, values: Readonly<Record<string, string>>): LookupQuery {
  return buildQuery(declared(operation), values);
}

/** The kind of the last failure the monitor saw for a provider. */
export function lastFailureKind(monitor: UpstreamMonitor, provider: string): string | undefined {
  return monitor.snapshot()[provider]?.lastFailure?.kind;
}

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

export interface Bindings {
  readonly get: { statusCode: number; body: string };
  readonly post: { statusCode: number; body: string };
  readonly soap11: { statusCode: number; body: string };
  readonly soap12: { statusCode: number; body: string };
  readonly json: { statusCode: number; body: string };
}

/**
 * One lookup on each of the five bindings (HTTP GET, HTTP POST, SOAP 1.1, SOAP 1.2, JSON) of the
 * service that has the operation, as `username` with `auth` (HTTP Basic) on every call.
 */
export async function fiveBindings(t: Pick<TestApp, 'app'>, operation: string, params: ReadonlyArray<readonly [string, string]>, username: string, auth: string): Promise<Bindings> {
  const op = declared(operation);
  const service = op.services.includes('reg') ? SERVICES.reg : SERVICES.bespoke;
  const namespace = service.defaultNamespace;
  const all: Array<readonly [string, string]> = [...params, ...(Catalogue.takesUsername(op) ? [['username', username] as const] : [])];
  const form = new URLSearchParams(all.map(([k, v]): [string, string] => [k, v])).toString();
  const headers = { authorization: auth };
  const get = await t.app.inject({ url: `${service.path}/${op.name}?${form}`, headers });
  const post = await t.app.inject({ method: 'POST', url: `${service.path}/${op.name}`, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: form });
  const body = `<${op.name} xmlns="${namespace}">${all.map(([k, v]) => `<${k}>${escapeXml(v)}</${k}>`).join('')}</${op.name}>`;
  const envelope = (ns: string): string => `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}"><soap:Body>${body}</soap:Body></soap:Envelope>`;
  const action = `${namespace.endsWith('/') ? namespace : `${namespace}/`}${op.name}`;
  const soap11 = await t.app.inject({ method: 'POST', url: service.path, headers: { ...headers, 'content-type': 'text/xml; charset=utf-8', soapaction: `"${action}"` }, payload: envelope(SOAP11) });
  const soap12 = await t.app.inject({ method: 'POST', url: service.path, headers: { ...headers, 'content-type': `application/soap+xml; charset=utf-8; action="${action}"` }, payload: envelope(SOAP12) });
  const values = new Map(params);
  const segments = op.jsonPath.segments.map((s) => encodeURIComponent(values.get(s.parameter) ?? ''));
  while (segments.at(-1) === '') segments.pop();
  const json = await t.app.inject({ url: `/api/json.aspx/${op.name}/${segments.join('/')}`, headers });
  return { get, post, soap11, soap12, json };
}

/** The first element named `local` in an XML document. */
export function elementOf(text: string, local: string): XmlElement {
  const find = (el: XmlElement): XmlElement | undefined => (el.local === local ? el : el.children.map(find).find((x) => x !== undefined));
  const el = find(readXml(text));
  if (!el) throw new Error(`no ${local} in the answer`);
  return el;
}

/** The vehicleJson of an XML Vehicle answer (any of the four XML bindings), parsed. */
export function vehicleJsonOf(text: string): unknown {
  return JSON.parse(elementOf(text, 'vehicleJson').text) as unknown;
}
