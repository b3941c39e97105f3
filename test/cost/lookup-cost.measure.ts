/**
 * Measures what one warm charged lookup costs on each interface, in counts that do not depend on
 * the machine (test/cost/lookup-cost.slow.test.ts runs it in a child process with the V8 flags it
 * needs and compares its output with lookup-cost.baseline.json):
 * - `sql`: the SQL statements SQLite ran for the answer, in order (better-sqlite3's Statement
 *   methods and Database.exec, wrapped here), BEGIN and COMMIT included;
 * - `socketWrites`: the writes of the server's socket for the answer (Socket._write and
 *   Socket._writev: each is one write or writev system call);
 * - `promises`: the promises created for it (async_hooks PROMISE inits);
 * - `bytes`: the JavaScript heap it allocated, from V8's heap statistics around a batch of answers
 *   with no garbage collection in between (a young generation large enough for the batch), per
 *   answer.
 *
 * The client is a raw keep-alive socket driven by callbacks in this same process: it creates no
 * promise, so every promise counted is the server's. Lookups run one at a time, so each debit is a
 * group commit of one (the worst case: under load a batch shares its BEGIN and COMMIT). Counts
 * are taken for each of SAMPLES answers and the most frequent value kept: a background timer of
 * the server (the lookup statistics flush, the alert sweep) that fires during one answer does not
 * change the result. Prints one JSON object on stdout.
 */
import { createHook } from 'node:async_hooks';
import { connect, type Socket } from 'node:net';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import Database from 'better-sqlite3';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { createTestApp } from '../helpers/test-app.js';

/** Warm-up answers per interface before anything is counted (JIT, caches, prepared statements). */
const WARM_UP = 300;
/** Answers counted one by one per interface; the most frequent count is kept. */
const SAMPLES = 25;
/** Answers in a batch whose heap growth is divided among them, and batches (the median is kept). */
const BATCH = 200;
const BATCHES = 3;
const USERNAME = 'cost';

export interface InterfaceCost {
  readonly sql: readonly string[];
  readonly socketWrites: number;
  readonly promises: number;
  readonly bytes: number;
}

/** What one answer of each interface costs; `interfaces` in a fixed order. */
export interface CostReport {
  readonly node: string;
  readonly interfaces: Readonly<Record<string, InterfaceCost>>;
}

interface Case {
  readonly name: string;
  /** The raw request; `n` numbers the requests of the run (an Idempotency-Key must be new each time). */
  readonly request: (n: number) => Buffer;
}

function http(head: string, headers: Record<string, string>, body = ''): Buffer {
  const lines = [head, 'Host: cost.test', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== '') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

function soapBody(ns: string): string {
  return (
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
    `<soap:Body><CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>FK482TR</RegistrationNumber><username>${USERNAME}</username></CheckFrance></soap:Body></soap:Envelope>`
  );
}

function cases(authorization: string): Case[] {
  const fixed = (bytes: Buffer) => () => bytes;
  return [
    {
      name: 'soap11',
      request: fixed(http('POST /api/reg.asmx HTTP/1.1', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://regcheck.org.uk/CheckFrance"' }, soapBody('http://schemas.xmlsoap.org/soap/envelope/'))),
    },
    {
      name: 'soap12',
      request: fixed(
        http('POST /api/reg.asmx HTTP/1.1', { 'Content-Type': 'application/soap+xml; charset=utf-8; action="http://regcheck.org.uk/CheckFrance"' }, soapBody('http://www.w3.org/2003/05/soap-envelope')),
      ),
    },
    { name: 'http-get', request: fixed(http(`GET /api/reg.asmx/CheckFrance?RegistrationNumber=FK482TR&username=${USERNAME} HTTP/1.1`, {})) },
    {
      name: 'http-post',
      request: fixed(http('POST /api/reg.asmx/CheckFrance HTTP/1.1', { 'Content-Type': 'application/x-www-form-urlencoded' }, `RegistrationNumber=FK482TR&username=${USERNAME}`)),
    },
    { name: 'json', request: fixed(http('GET /api/json.aspx/CheckFrance/FK482TR HTTP/1.1', { Authorization: authorization })) },
    {
      name: 'json-idempotency-key',
      request: (n) => http('GET /api/json.aspx/CheckFrance/FK482TR HTTP/1.1', { Authorization: authorization, 'Idempotency-Key': `cost-${n}` }),
    },
  ];
}

/** A keep-alive HTTP/1.1 client on one socket, one request at a time, callbacks only. */
class RawClient {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: ((status: number) => void) | undefined;

  constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
      this.tryComplete();
    });
  }

  send(request: Buffer, done: (status: number) => void): void {
    this.waiting = done;
    this.socket.write(request);
  }

  private tryComplete(): void {
    const end = this.buffered.indexOf('\r\n\r\n');
    if (end < 0 || !this.waiting) return;
    const head = this.buffered.subarray(0, end).toString('latin1');
    if (/\r\ntransfer-encoding:/i.test(head)) throw new Error('a chunked answer: the cost client reads Content-Length bodies only');
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 'NaN');
    if (!Number.isInteger(length)) throw new Error(`an answer without Content-Length: ${head}`);
    if (this.buffered.length < end + 4 + length) return;
    this.buffered = this.buffered.subarray(end + 4 + length);
    const done = this.waiting;
    this.waiting = undefined;
    done(Number(head.slice(9, 12)));
  }
}

/** What is being counted right now; undefined between answers. */
interface Counting {
  sql: string[];
  socketWrites: number;
  promises: number;
}
let counting: Counting | undefined;

function countSql(): void {
  const probe = new Database(':memory:');
  const statementProto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
  probe.close();
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = statementProto[method] as (this: { source: string }, ...args: unknown[]) => unknown;
    statementProto[method] = function (this: { source: string }, ...args: unknown[]): unknown {
      counting?.sql.push(this.source.replace(/\s+/g, ' ').trim());
      return original.apply(this, args);
    };
  }
  const databaseProto = Database.prototype as unknown as Record<string, unknown>;
  const exec = databaseProto.exec as (this: unknown, sql: string) => unknown;
  databaseProto.exec = function (this: unknown, sql: string): unknown {
    counting?.sql.push(sql.replace(/\s+/g, ' ').trim());
    return exec.call(this, sql);
  };
}

/** Counts the server socket's writes (each _write or _writev is one system call). */
function countSocketWrites(socket: Socket): void {
  const writable = socket as unknown as Record<'_write' | '_writev', ((...args: unknown[]) => unknown) | undefined>;
  for (const method of ['_write', '_writev'] as const) {
    const original = writable[method];
    if (!original) continue;
    writable[method] = function (this: unknown, ...args: unknown[]): unknown {
      if (counting) counting.socketWrites += 1;
      return original.apply(this, args);
    };
  }
}

function mostFrequent<T>(values: readonly T[], key: (value: T) => string): T {
  const counts = new Map<string, { value: T; n: number }>();
  for (const value of values) {
    const k = key(value);
    const entry = counts.get(k) ?? { value, n: 0 };
    entry.n += 1;
    counts.set(k, entry);
  }
  return [...counts.values()].reduce((a, b) => (b.n > a.n ? b : a)).value;
}

async function main(): Promise<void> {
  if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc (test/cost/lookup-cost.slow.test.ts does)');
  const gc = globalThis.gc;
  countSql();
  // COST_TRACE=<interface>: where that interface's promises are created, on stderr (to find what grew).
  const trace = process.env.COST_TRACE;
  const traced: string[] = [];
  const promiseHook = createHook({
    init(_id, type) {
      if (!counting || type !== 'PROMISE') return;
      counting.promises += 1;
      if (tracing) traced.push((new Error().stack ?? '').split('\n').filter((line) => line.includes(' at ') && !line.includes('async_hooks')).slice(0, 5).join('\n'));
    },
  });
  let tracing = false;

  const t = await createTestApp({ BASE_URL: 'http://cost.test' });
  try {
    const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    if (!summary.committed) throw new Error('the sample dataset did not import');
    const apiKey = await t.account(USERNAME, 1_000_000_000);
    t.app.server.on('connection', countSocketWrites);
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(Number(port), '127.0.0.1', () => {
        resolve(s);
      });
      s.once('error', reject);
    });
    socket.setNoDelay(true);
    const client = new RawClient(socket);
    let n = 0;

    /** Sends `count` requests one after another, then calls `done` (callbacks: no promise of ours). */
    const sequence = (c: Case, count: number, each: (() => void) | undefined, after: (() => void) | undefined, done: () => void): void => {
      let left = count;
      const next = (): void => {
        if (left === 0) {
          done();
          return;
        }
        left -= 1;
        n += 1;
        each?.();
        client.send(c.request(n), (status) => {
          if (status !== 200) throw new Error(`${c.name} answered ${status}`);
          // The server's work after the answer (onResponse hooks, the socket's write callback)
          // belongs to this answer: two turns of the event loop cover it.
          setImmediate(() => {
            setImmediate(() => {
              after?.();
              next();
            });
          });
        });
      };
      next();
    };
    const run = (c: Case, count: number, each?: () => void, after?: () => void): Promise<void> =>
      new Promise((resolve) => {
        sequence(c, count, each, after, resolve);
      });

    const interfaces: Record<string, InterfaceCost> = {};
    // COST_ONLY=json,soap11: measure only these interfaces (while working on one).
    const only = process.env.COST_ONLY?.split(',').filter((name) => name !== '');
    for (const c of cases(t.basic(USERNAME, apiKey)).filter((k) => only === undefined || only.includes(k.name))) {
      await run(c, WARM_UP);
      const samples: Counting[] = [];
      promiseHook.enable();
      await run(
        c,
        SAMPLES,
        () => {
          counting = { sql: [], socketWrites: 0, promises: 0 };
        },
        () => {
          if (counting) samples.push(counting);
          counting = undefined;
        },
      );
      promiseHook.disable();
      if (trace === c.name) {
        tracing = true;
        promiseHook.enable();
        await run(c, 1, () => { counting = { sql: [], socketWrites: 0, promises: 0 }; }, () => { counting = undefined; });
        promiseHook.disable();
        tracing = false;
        process.stderr.write(`${traced.length} promises of one ${c.name} answer, where created:\n${traced.join('\n--\n')}\n`);
      }
      const sql = mostFrequent(samples, (s) => s.sql.join('\n')).sql;
      const socketWrites = mostFrequent(samples, (s) => String(s.socketWrites)).socketWrites;
      const promises = mostFrequent(samples, (s) => String(s.promises)).promises;

      // Bytes: the median of BATCHES batches with no collection in them (a batch that met one is run again).
      const perBatch: number[] = [];
      for (let attempt = 0; attempt < BATCHES + 5 && perBatch.length < BATCHES; attempt += 1) {
        gc();
        await turns(2);
        const collectionsAtStart = collections;
        const before = getHeapStatistics();
        await run(c, BATCH);
        const after = getHeapStatistics();
        // Observer entries are delivered a turn later.
        await turns(2);
        if (collections === collectionsAtStart) perBatch.push((after.used_heap_size - before.used_heap_size) / BATCH);
      }
      if (perBatch.length < BATCHES) throw new Error(`${c.name}: the batches met garbage collections; raise --min-semi-space-size`);
      const bytes = Math.round(perBatch.sort((a, b) => a - b)[Math.floor(BATCHES / 2)] ?? Number.NaN);
      interfaces[c.name] = { sql, socketWrites, promises, bytes };
    }
    socket.destroy();
    const report: CostReport = { node: process.versions.node, interfaces };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await t.close();
  }
}

/** Garbage collections seen so far (PerformanceObserver 'gc' entries). */
let collections = 0;
new PerformanceObserver((list) => {
  collections += list.getEntries().length;
}).observe({ entryTypes: ['gc'] });

async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
