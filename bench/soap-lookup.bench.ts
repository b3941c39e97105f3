/**
 * `npm run bench:soap`: SOAP 1.1 lookups in one run against
 *   (a) the service (envelope parsing, auth by the `username` element, SQLite reads, a credit debit
 *       and the response envelope per request),
 *   (b) a bare Fastify route answering the same response bytes (bench/bare-route.ts),
 *   (c) node-soap (the `soap` package) serving the same operation from our WSDL, answering the same
 *       result object from an in-memory Map (bench/node-soap-server.ts).
 * Targets: (a) reaches at least half of (b)'s throughput and at least 3x (c)'s. (a) is measured
 * twice: without an Idempotency-Key, and with a new key on every request (BENCH_IDEMPOTENCY_KEY=absent
 * or present runs only one of them).
 *
 * Every server runs in its own child process; autocannon runs here. The store is prepared with the
 * project's own code, then served by the real entry point (src/main.ts), as `npm start` runs it.
 *
 * Environment: BENCH_CONNECTIONS (32), BENCH_DURATION (10 s per measured run), BENCH_WARMUP (2 s),
 * BENCH_ROUNDS (2), BENCH_PIN (true: a core each for the load generator and the servers, see
 * pinCores), BENCH_CPU_PROF (a directory: run the service with `node --cpu-prof` and leave
 * its .cpuprofile there). Exit code 0 whatever the throughput ratios (it is a benchmark); 1 when a
 * server fails to start or a correctness check fails (non-2xx answers, wrong bodies, credits not
 * debited exactly once per answered lookup).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { SAMPLE_DATASET_PATH } from '../src/bootstrap/seed.js';
import { SOAP11_NS } from '../src/http/lookup/soap/soap-envelope.js';
import { isNil, readXml, type XmlElement } from '../src/xml/xml-reader.js';
import {
  Checks,
  freePort,
  HOST,
  makeTempDir,
  pinCores,
  idempotencyKeyTargets,
  positiveInt,
  prepareStore,
  roundRatiosLine,
  runBench,
  startBareRoute,
  startServer,
  startService,
  START_CREDITS,
  table,
  TABLE_LEGEND,
  waitUntilAnswering,
  warmUpAndMeasure,
  type LoadRun,
  type Server,
  type Target,
} from './bench-support.js';

const SOAP_PATH = '/api/reg.asmx';
const NAMESPACE = 'http://regcheck.org.uk';
const SERVICE_NAME = 'CarReg';
const PORT_NAME = 'CarRegSoap';
const OPERATION = 'CheckUSA';
const KEY_PARAMETERS = ['RegistrationNumber', 'State'] as const;
/** A record of the bundled sample dataset; each answer costs 1 credit. */
const PLATE = { RegistrationNumber: '7KDJ294', State: 'CA' } as const;
const TARGET_BARE_RATIO = 0.5;
const TARGET_NODE_SOAP_RATIO = 3;

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The SOAP 1.1 request, as a .NET proxy sends it. */
function envelope(key: Readonly<Record<(typeof KEY_PARAMETERS)[number], string>>, username: string): string {
  const params = [...KEY_PARAMETERS.map((name) => [name, key[name]] as const), ['username', username] as const]
    .map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`)
    .join('');
  return (
    '<?xml version="1.0" encoding="utf-8"?>' +
    `<soap:Envelope xmlns:soap="${SOAP11_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
    `<soap:Body><${OPERATION} xmlns="${NAMESPACE}">${params}</${OPERATION}></soap:Body></soap:Envelope>`
  );
}

const SOAP_HEADERS = {
  'content-type': 'text/xml; charset=utf-8',
  soapaction: `"${NAMESPACE}/${OPERATION}"`,
} as const;

interface Captured {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers: Headers;
}

async function post(server: Server, body: string): Promise<Captured> {
  const response = await fetch(`${server.baseUrl}${SOAP_PATH}`, { method: 'POST', headers: SOAP_HEADERS, body });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.text(), headers: response.headers };
}

/** The `{Op}Result` element of a SOAP 1.1 response, whatever prefixes it uses; undefined if absent. */
function resultElement(xml: string): XmlElement | undefined {
  const root = readXml(xml);
  if (root.uri !== SOAP11_NS || root.local !== 'Envelope') return undefined;
  const body = root.children.find((c) => c.uri === SOAP11_NS && c.local === 'Body');
  const response = body?.children.find((c) => c.uri === NAMESPACE && c.local === `${OPERATION}Response`);
  return response?.children.find((c) => c.uri === NAMESPACE && c.local === `${OPERATION}Result`);
}

/**
 * An element as node-soap takes a response object: a leaf becomes its text (null when
 * xsi:nil), an element with children an object of them in document order. Vehicle results repeat
 * no element name, so nothing is lost.
 */
function toObject(element: XmlElement): unknown {
  if (element.children.length === 0) return isNil(element) ? null : element.text;
  const object: Record<string, unknown> = {};
  for (const child of element.children) object[child.local] = toObject(child);
  return object;
}

interface SampleRecord {
  readonly operation: string;
  readonly key: Record<string, string>;
  readonly vehicle: Record<string, unknown>;
}

function sampleRecords(operation: string): SampleRecord[] {
  return readFileSync(SAMPLE_DATASET_PATH, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as SampleRecord)
    .filter((record) => record.operation === operation);
}

/** The first `max` characters of a text, on one line. */
function excerpt(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}

function ratioLine(name: string, ours: LoadRun, other: LoadRun, target: number, comparison: string): string {
  const ratio = ours.rps / other.rps;
  return `${name} = ${ratio.toFixed(2)} (${ours.rps.toFixed(0)} / ${other.rps.toFixed(0)} req/s): ${ratio >= target ? 'PASS' : 'FAIL'} (target ${comparison} ${target})`;
}

async function main(): Promise<number> {
  const connections = positiveInt('BENCH_CONNECTIONS', 32);
  const duration = positiveInt('BENCH_DURATION', 10);
  const warmup = positiveInt('BENCH_WARMUP', 2);
  const rounds = positiveInt('BENCH_ROUNDS', 2);
  const cpuProfDir = process.env.BENCH_CPU_PROF?.trim();
  const checks = new Checks();

  console.log(`soap lookup benchmark: POST ${SOAP_PATH} SOAP 1.1 ${OPERATION} ${PLATE.RegistrationNumber}/${PLATE.State}`);
  console.log(`  node ${process.version}, ${cpus().length} CPUs; ${connections} connections, ${duration} s per run, ${warmup} s warm-up, ${rounds} round(s)`);
  console.log(`  ${pinCores()}`);
  console.log('  request logging is off for every server (the service at LOG_LEVEL=warn, the bare route likewise,');
  console.log('  node-soap without a log function): per-request log lines would measure the logger, not SOAP.');

  const work = makeTempDir('vehicle-lookup-bench-soap-');
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);
  const account = await prepareStore(dataDir);
  console.log(`  store: ${account.sampleRecords} sample records, account "${account.username}" with ${START_CREDITS} credits`);

  const nodeArgs: string[] = [];
  if (cpuProfDir !== undefined && cpuProfDir !== '') {
    const dir = resolve(cpuProfDir);
    mkdirSync(dir, { recursive: true });
    nodeArgs.push('--cpu-prof', '--cpu-prof-dir', dir);
    console.log(`  profiling the service: its .cpuprofile goes to ${dir} when it stops`);
  }
  const service = await startService(dataDir, nodeArgs);

  // (a) once: its answer is what the bare route replays and what node-soap must match.
  const requestBody = envelope(PLATE, account.username);
  const sample = await post(service, requestBody);
  if (sample.status !== 200) throw new Error(`the service answered ${sample.status} to ${OPERATION}: ${sample.body}`);
  const ourResult = resultElement(sample.body);
  if (!ourResult) throw new Error(`the service's answer has no ${OPERATION}Result: ${excerpt(sample.body, 400)}`);
  const bodyFile = join(work, 'body.xml');
  writeFileSync(bodyFile, sample.body);

  // Our WSDL, as a client would fetch it.
  const wsdlResponse = await fetch(`${service.baseUrl}${SOAP_PATH}?WSDL`);
  const wsdl = await wsdlResponse.text();
  if (!wsdlResponse.ok) throw new Error(`GET ${SOAP_PATH}?WSDL answered ${wsdlResponse.status}`);
  const wsdlFile = join(work, 'reg.wsdl');
  writeFileSync(wsdlFile, wsdl);

  // node-soap's Map: every CheckUSA record of the sample dataset, as the result object our answer
  // to it encodes (vehicleJson is the sample document plus the ImageUrl the service adds;
  // vehicleData is derived from it).
  console.log('\ncorrectness');
  const entries: Array<{ key: string[]; result: unknown }> = [];
  for (const record of sampleRecords(OPERATION)) {
    const key = { RegistrationNumber: record.key.RegistrationNumber ?? '', State: record.key.State ?? '' };
    const answer = await post(service, envelope(key, account.username));
    const result = answer.status === 200 ? resultElement(answer.body) : undefined;
    if (!result) throw new Error(`the service answered ${answer.status} to ${OPERATION} ${key.RegistrationNumber}: ${excerpt(answer.body, 400)}`);
    const object = toObject(result) as { vehicleJson?: unknown };
    const document = typeof object.vehicleJson === 'string' ? (JSON.parse(object.vehicleJson) as Record<string, unknown>) : {};
    if (!('ImageUrl' in record.vehicle)) delete document.ImageUrl;
    checks.check(isDeepStrictEqual(document, record.vehicle), `${OPERATION} ${key.RegistrationNumber}/${key.State}: our vehicleJson is the sample document (plus ImageUrl)`);
    entries.push({ key: KEY_PARAMETERS.map((name) => key[name]), result: { [`${OPERATION}Result`]: object } });
  }
  const dataFile = join(work, 'node-soap-data.json');
  writeFileSync(dataFile, JSON.stringify(entries));

  const nodeSoapPort = await freePort();
  const nodeSoap = startServer('node-soap (bench/node-soap-server.ts)', 'bench/node-soap-server.ts', nodeSoapPort, {
    NODE_SOAP_HOST: HOST,
    NODE_SOAP_PORT: String(nodeSoapPort),
    NODE_SOAP_PATH: SOAP_PATH,
    NODE_SOAP_WSDL_FILE: wsdlFile,
    NODE_SOAP_SERVICE: SERVICE_NAME,
    NODE_SOAP_PORT_NAME: PORT_NAME,
    NODE_SOAP_OPERATION: OPERATION,
    NODE_SOAP_KEY_PARAMETERS: KEY_PARAMETERS.join(','),
    NODE_SOAP_DATA_FILE: dataFile,
  });
  const [bare] = await Promise.all([
    startBareRoute({ method: 'POST', path: SOAP_PATH, bodyFile, contentType: sample.contentType }),
    waitUntilAnswering(nodeSoap, `${SOAP_PATH}?wsdl`),
  ]);

  console.log(`  our answer: ${Buffer.byteLength(sample.body)} bytes, ${sample.contentType}`);
  const bareSample = await post(bare, requestBody);
  checks.check(
    bareSample.status === 200 && bareSample.body === sample.body && bareSample.contentType === sample.contentType,
    'the bare route answers the same status, body bytes and content type as the service',
  );

  const nodeSoapSample = await post(nodeSoap, requestBody);
  const theirResult = nodeSoapSample.status === 200 ? safeResultElement(nodeSoapSample.body) : undefined;
  checks.check(
    nodeSoapSample.status === 200 && nodeSoapSample.contentType.startsWith('text/xml') && theirResult !== undefined,
    `node-soap answers 200 ${nodeSoapSample.contentType} with a SOAP 1.1 envelope holding {${NAMESPACE}}${OPERATION}Result`,
  );
  const ourObject = toObject(ourResult) as Record<string, unknown>;
  const theirObject = theirResult ? (toObject(theirResult) as Record<string, unknown>) : {};
  checks.check(
    typeof ourObject.vehicleJson === 'string' && theirObject.vehicleJson === ourObject.vehicleJson,
    'node-soap\'s vehicleJson is the same text as ours',
  );
  // toObject keeps document order in key order, so equal JSON texts mean the same elements in the
  // same order with the same values and nils.
  checks.check(JSON.stringify(theirObject) === JSON.stringify(ourObject), 'node-soap\'s result has the same elements, order, values and nils as ours');
  console.log(`  node-soap's answer: ${Buffer.byteLength(nodeSoapSample.body)} bytes, ${nodeSoapSample.contentType}; not byte-identical to ours:`);
  for (const line of describeDifferences(sample, nodeSoapSample)) console.log(`    - ${line}`);
  if (checks.failed()) return 1;

  // Every target gets the same request bytes; only the service reads the username.
  const target = (label: string, server: Server): Target => ({ label, server, path: SOAP_PATH, method: 'POST', headers: SOAP_HEADERS, body: requestBody });
  const bareTarget = target('bare route', bare);
  const which = idempotencyKeyTargets();
  const oursTargets: Target[] = [
    ...(which.absent ? [target('our SOAP', service)] : []),
    ...(which.present ? [{ ...target('SOAP + Idem-Key', service), idempotencyKeys: true as const }] : []),
  ];
  const nodeSoapTarget = target('node-soap', nodeSoap);
  const targets = [bareTarget, ...oursTargets, nodeSoapTarget];
  const expected = new Map<Target, string>([
    [bareTarget, sample.body],
    ...oursTargets.map((t) => [t, sample.body] as const),
    [nodeSoapTarget, nodeSoapSample.body],
  ]);

  const measured = await warmUpAndMeasure(targets, checks, {
    connections,
    warmupSeconds: warmup,
    duration,
    rounds,
    expectBody: (t) => expected.get(t) ?? '',
    paid: { targets: oursTargets, service, username: account.username },
  });
  if (!measured) return 1;

  const bareBest = measured.best(bareTarget);
  const nodeSoapBest = measured.best(nodeSoapTarget);
  console.log(`\nevery run (${TABLE_LEGEND})`);
  console.log(table(measured.runs.map((r) => r.run)));
  console.log(`\nbest of ${rounds} round(s)`);
  console.log(table([bareBest, ...oursTargets.map((t) => measured.best(t)), nodeSoapBest]));
  for (const oursTarget of oursTargets) {
    const oursBest = measured.best(oursTarget);
    const name = oursTarget.label;
    console.log('');
    console.log(ratioLine(`${name} / bare     `, oursBest, bareBest, TARGET_BARE_RATIO, '>='));
    console.log(ratioLine(`${name} / node-soap`, oursBest, nodeSoapBest, TARGET_NODE_SOAP_RATIO, '>='));
    console.log(roundRatiosLine(`${name} / bare     `, measured.roundRatios(oursTarget, bareTarget)));
    console.log(roundRatiosLine(`${name} / node-soap`, measured.roundRatios(oursTarget, nodeSoapTarget)));
    const [bareCost, oursCost, nodeSoapCost] = [bareBest, oursBest, nodeSoapBest].map((r) => r.serverUsPerRequest);
    if (bareCost !== undefined && oursCost !== undefined && nodeSoapCost !== undefined) {
      // What the ratios would be with each server alone on a core: the figures to read when other
      // load (see "other CPU") has starved one of the runs.
      console.log(
        `server CPU per request: bare ${bareCost.toFixed(1)} µs, ${name} ${oursCost.toFixed(1)} µs, node-soap ${nodeSoapCost.toFixed(1)} µs; ` +
          `by CPU cost ours / bare = ${(bareCost / oursCost).toFixed(2)}, ours / node-soap = ${(nodeSoapCost / oursCost).toFixed(2)}`,
      );
    }
  }

  if (checks.failed()) {
    console.log(`\ncorrectness checks failed: ${checks.failures.length}`);
    return 1;
  }
  return 0;
}

/** The result element, or undefined when the body is not XML at all. */
function safeResultElement(xml: string): XmlElement | undefined {
  try {
    return resultElement(xml);
  } catch {
    return undefined;
  }
}

/** How node-soap's answer differs from ours, in words. */
function describeDifferences(ours: Captured, theirs: Captured): string[] {
  const lines: string[] = [];
  const head = (body: string): string => {
    const at = body.indexOf('<vehicleJson');
    const cut = at >= 0 ? at : body.search(/<[^>]*vehicleJson/);
    return excerpt(body.slice(0, cut >= 0 ? cut : 300), 400);
  };
  lines.push(`ours starts:      ${head(ours.body)}`);
  lines.push(`node-soap starts: ${head(theirs.body)}`);
  const nil = (body: string): string => /<[^>]*xsi:nil="true"[^>]*>(<\/[^>]+>)?/.exec(body)?.[0] ?? '(none)';
  lines.push(`a nil element: ours ${nil(ours.body)}, node-soap ${nil(theirs.body)}`);
  if (ours.contentType !== theirs.contentType) lines.push(`content type: ours "${ours.contentType}", node-soap "${theirs.contentType}"`);
  const framing = (c: Captured): string =>
    c.headers.get('transfer-encoding') === 'chunked' ? 'chunked' : `content-length ${c.headers.get('content-length') ?? '?'}`;
  lines.push(`framing: ours ${framing(ours)}, node-soap ${framing(theirs)}`);
  return lines;
}

runBench('bench:soap', main);
