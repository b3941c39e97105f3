import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_EXAMPLE_PATH } from '../../src/bootstrap/seed.js';
import { enginesToTest, freshPostgresDatabase } from '../helpers/engines.js';
import { freePort } from '../helpers/ports.js';
import { serverArgs } from '../helpers/server-entry.js';
import { tempDir } from '../helpers/test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const children: ChildProcess[] = [];
// Vitest exports Vite's BASE_URL ("/") into process.env; the service would read it as its own.
const { BASE_URL: _viteBase, DATABASE_URL: _db, ...inherited } = process.env;

/** Starts the service as `npm start` does (the sources, or dist/: helpers/server-entry.ts) and collects its output. */
async function start(env: Record<string, string>): Promise<{ child: ChildProcess; output: () => string; base: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, serverArgs(), {
    cwd: ROOT,
    env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr.on('data', (d: Buffer) => (text += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited: ${text}`);
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return { child, output: () => text, base };
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not become ready: ${text}`);
}

/** The stores the demo-seeding test runs on (awaited here: collection is synchronous). */
const ENGINES_TO_TEST = await enginesToTest();

/** The banner's curl example: the demo key and the URL it calls. */
const EXAMPLE = /curl -u 'demo:([A-Za-z0-9_-]{43})' (\S+)/;

/**
 * The demo key and example URL of the banner, once it is in the output: it is printed once the
 * service listens, and its bytes may reach this process after /readyz answered.
 */
async function demoExample(output: () => string): Promise<{ apiKey: string; url: string; authorization: string }> {
  for (let i = 0; i < 100 && !EXAMPLE.test(output()); i += 1) await new Promise((r) => setTimeout(r, 50));
  const [, apiKey, url] = EXAMPLE.exec(output()) ?? [];
  if (apiKey === undefined || url === undefined) throw new Error(`no demo key in the output:\n${output()}`);
  return { apiKey, url, authorization: `Basic ${Buffer.from(`demo:${apiKey}`).toString('base64')}` };
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

describe('starting the service', () => {
  it.each(ENGINES_TO_TEST)('creates the demo account on an empty store (%s), prints its key once with a curl example that works, and exits cleanly on SIGTERM', async (engine) => {
    const dir = tempDir();
    const database = engine === 'postgres' ? await freshPostgresDatabase() : undefined;
    const store = { DATA_DIR: dir.path, ...(database ? { DATABASE_URL: database.url } : {}) };
    try {
      const first = await start(store);
      const example = await demoExample(first.output);
      const output = first.output();
      expect(output).toMatch(/SAMPLE records/);
      expect(example.url).toBe(`${first.base}${DEMO_EXAMPLE_PATH}`);
      const res = await fetch(example.url, { headers: { authorization: example.authorization } });
      expect(res.status).toBe(200);
      expect(await (await fetch(`${first.base}/ajax/getcredits.aspx?username=demo`)).text()).toBe('99');
      // Logs never carry the key.
      expect(output.split(example.apiKey).length - 1).toBe(2);

      first.child.kill('SIGTERM');
      const [code] = (await once(first.child, 'exit')) as [number | null];
      expect(code).toBe(0);

      // A second start on the same store neither re-creates the account nor prints a key.
      const second = await start(store);
      expect(second.output()).not.toMatch(/API key/);
      expect(await (await fetch(`${second.base}/ajax/getcredits.aspx?username=demo`)).text()).toBe('99');
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    } finally {
      await database?.drop();
      dir.remove();
    }
  });

  it('logs each request at info with its request id and the client X-Request-Id beside it, and none at warn', async () => {
    const dir = tempDir();
    try {
      const server = await start({ DATA_DIR: dir.path });
      const example = await demoExample(server.output);
      const res = await fetch(example.url, { headers: { authorization: example.authorization, 'x-request-id': 'log-test-1' } });
      expect(res.status).toBe(200);
      // Our id is sent back; the client's is only logged, as clientRequestId.
      const ours = res.headers.get('x-request-id');
      expect(ours).toMatch(/^[0-9a-f-]{36}$/);
      const lines = (): Array<Record<string, unknown>> =>
        server
          .output()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .filter((l) => l.reqId === ours);
      // "request completed" is written once the response has gone out.
      for (let i = 0; i < 100 && lines().length < 2; i += 1) await new Promise((r) => setTimeout(r, 50));
      const logged = lines();
      expect(logged.map((l) => l.msg)).toEqual(['incoming request', 'request completed']);
      expect(logged[1]?.res).toEqual({ statusCode: 200 });
      expect((logged[0]?.req as { clientRequestId?: unknown } | undefined)?.clientRequestId).toBe('log-test-1');
      server.child.kill('SIGTERM');
      await once(server.child, 'exit');

      const quiet = await start({ DATA_DIR: dir.path, LOG_LEVEL: 'warn' });
      const before = quiet.output();
      expect((await fetch(`${quiet.base}/ajax/getcredits.aspx?username=demo`, { headers: { 'x-request-id': 'log-test-2' } })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 200));
      expect(quiet.output()).toBe(before);
      quiet.child.kill('SIGTERM');
      await once(quiet.child, 'exit');
    } finally {
      dir.remove();
    }
  });

  it('prints the demo key only once it listens: the curl example works the moment the key is shown', async () => {
    const dir = tempDir();
    try {
      const port = await freePort();
      const child = spawn(process.execPath, serverArgs(), {
        cwd: ROOT,
        env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATA_DIR: dir.path },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      // Nothing touches the port before the key appears; the first request is sent on seeing it.
      const example = await new Promise<RegExpExecArray>((resolve, reject) => {
        let text = '';
        child.stdout.on('data', (d: Buffer) => {
          text += d.toString();
          const match = EXAMPLE.exec(text);
          if (match) resolve(match);
        });
        child.once('exit', () => {
          reject(new Error(`server exited before printing a key: ${text}`));
        });
      });
      const res = await fetch(example[2] ?? '', { headers: { authorization: `Basic ${Buffer.from(`demo:${example[1] ?? ''}`).toString('base64')}` } });
      expect(res.status).toBe(200);
      child.kill('SIGTERM');
      await once(child, 'exit');
    } finally {
      dir.remove();
    }
  });

  it('still shows the demo key, once, when it seeded the store but cannot listen (the port is taken)', async () => {
    const dir = tempDir();
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const address = taken.address();
      const port = address !== null && typeof address === 'object' ? address.port : 0;
      const child = spawn(process.execPath, serverArgs(), {
        cwd: ROOT,
        env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATA_DIR: dir.path },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(1);
      expect(text).toMatch(/failed to start: .*EADDRINUSE/);
      expect(text.match(/curl -u 'demo:[A-Za-z0-9_-]{43}'/g)).toHaveLength(1);
    } finally {
      taken.close();
      dir.remove();
    }
  });

  it('refuses to start with a clear message on bad configuration', async () => {
    const child = spawn(process.execPath, serverArgs(), {
      cwd: ROOT,
      env: { ...inherited, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(err).toMatch(/configuration error: PORT must be a port number/);
  });
});
