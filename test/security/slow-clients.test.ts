/**
 * Issue 17 item 5: a request that declared a body and then trickled or idled held its connection
 * for ever (no request timeout), and 19,985 of them used up the file descriptors until /healthz
 * stopped answering. Here a few hundred slow clients (loopback only, bounded in count and time)
 * must neither stop /healthz and a lookup from answering nor keep their connections past the
 * request timeout; past MAX_CONNECTIONS new connections are closed as they arrive. On SQLite and
 * on PostgreSQL with Redis (issue 31).
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest, type TestEngine } from '../helpers/engines.js';
import { sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await t?.close();
  t = undefined;
});

async function start(engine: TestEngine, env: Record<string, string>): Promise<{ app: TestApp; port: number; key: string }> {
  const app = await createTestApp(await engineEnv(engine, env), undefined, engine);
  t = app;
  await app.importRecords(sampleLines());
  const key = await app.account('patient', 10);
  const port = Number(new URL(await app.app.listen({ port: 0, host: '127.0.0.1' })).port);
  return { app, port, key };
}

interface SlowClient {
  /** Milliseconds from opening until the server closed the connection (undefined: still open). */
  closedAfter: number | undefined;
  received: string;
}

/**
 * Opens a connection that sends `head` and then one byte of `trickle` every `everyMs` (never
 * finishing the body), at most `maxWrites` times. Bounded: the caller destroys it in afterEach.
 */
function slowClient(port: number, head: string, trickle: boolean, everyMs = 200, maxWrites = 50): SlowClient {
  const client: SlowClient = { closedAfter: undefined, received: '' };
  const opened = Date.now();
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  let writes = 0;
  const timer = setInterval(() => {
    writes += 1;
    if (!trickle || writes > maxWrites || socket.destroyed) {
      clearInterval(timer);
      return;
    }
    socket.write('<');
  }, everyMs);
  socket.on('data', (data: Buffer) => (client.received += data.toString('latin1')));
  socket.on('error', () => undefined);
  socket.on('close', () => {
    clearInterval(timer);
    client.closedAfter = Date.now() - opened;
  });
  socket.write(head);
  return client;
}

const SLOW_BODY = 'POST /api/reg.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: 100000\r\n\r\n<';
const SLOW_HEADERS = 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ';

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}

async function timed<T>(action: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await action();
  return { value, ms: Date.now() - started };
}

describe.each(await enginesToTest())('slow clients on %s', (engine) => {
  it('cannot stop /healthz or a lookup from answering, and lose their connections at the request timeout', async () => {
    const { app, port, key } = await start(engine, { REQUEST_TIMEOUT_MS: '2500', HEADERS_TIMEOUT_MS: '2000' });
    const clients = [
      ...Array.from({ length: 150 }, () => slowClient(port, SLOW_BODY, true)),
      ...Array.from({ length: 100 }, () => slowClient(port, SLOW_BODY, false)),
      ...Array.from({ length: 50 }, () => slowClient(port, SLOW_HEADERS, true)),
    ];
    const connections = (): Promise<number> => new Promise((resolve) => app.app.server.getConnections((_e, n) => { resolve(n); }));
    let open = 0;
    for (let i = 0; i < 60 && open < 290; i++) {
      await waitFor(() => false, 50);
      open = await connections();
    }
    expect(open).toBeGreaterThanOrEqual(290);

    const health = await timed(() => fetch(`http://127.0.0.1:${port}/healthz`));
    expect(health.value.status).toBe(200);
    const lookup = await timed(() => fetch(`http://127.0.0.1:${port}/api/json.aspx/CheckFrance/FK482TR`, { headers: { authorization: app.basic('patient', key) } }));
    expect(lookup.value.status).toBe(200);
    // Both answered while the slow clients still held their connections (a loaded 2-core machine
    // may take a while, but not the request timeout).
    expect(health.ms + lookup.ms).toBeLessThan(2000);
    expect(clients.filter((c) => c.closedAfter === undefined).length).toBeGreaterThan(200);

    // Request timeout 2.5 s, swept every 500 ms; the trickling clients are well inside their
    // 50 writes (10 s) when the server closes them.
    await waitFor(() => clients.every((c) => c.closedAfter !== undefined), 8000);
    const stillOpen = clients.filter((c) => c.closedAfter === undefined).length;
    expect(stillOpen).toBe(0);
    expect(Math.max(...clients.map((c) => c.closedAfter ?? Infinity))).toBeLessThan(6000);
    // A slow body is told why: 408 in plain text, as before any other request is read.
    const bodies = clients.slice(0, 250).filter((c) => c.received !== '');
    expect(bodies.length).toBeGreaterThan(0);
    expect(bodies.every((c) => c.received.startsWith('HTTP/1.1 408 Request Timeout'))).toBe(true);
  });

  it('closes connections past MAX_CONNECTIONS as they arrive, counts them, and serves again once the slow ones time out', async () => {
    const { app, port } = await start(engine, { MAX_CONNECTIONS: '40', REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1000' });
    const hogs = Array.from({ length: 40 }, () => slowClient(port, SLOW_BODY, false));
    await waitFor(() => false, 300);
    const extra = slowClient(port, SLOW_BODY, false);
    await waitFor(() => extra.closedAfter !== undefined, 1000);
    expect(extra.closedAfter).toBeLessThan(1000);
    expect(extra.received).toBe('');
    const metrics = await app.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^vehicle_lookup_connections_dropped_total [1-9]/m);

    await waitFor(() => hogs.every((c) => c.closedAfter !== undefined), 4000);
    expect(hogs.every((c) => c.closedAfter !== undefined)).toBe(true);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
  });
});

describe('the connection settings', () => {
  it('have defaults that bound every phase of a connection', async () => {
    const { loadConfig } = await import('../../src/config/config.js');
    expect(loadConfig({}).http).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 72_000, socketTimeoutMs: 120_000, maxConnections: 10_000 });
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }).http.headersTimeoutMs).toBe(5000);
  });

  it('refuse a headers timeout longer than the request timeout, and values out of range, at start-up', async () => {
    const { loadConfig } = await import('../../src/config/config.js');
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '2000' })).toThrow(/HEADERS_TIMEOUT_MS \(2000\) must not exceed REQUEST_TIMEOUT_MS \(1000\)/);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '0' })).toThrow(/REQUEST_TIMEOUT_MS must be a whole number from 100/);
    expect(() => loadConfig({ MAX_CONNECTIONS: 'lots' })).toThrow(/MAX_CONNECTIONS must be a whole number/);
  });
});
