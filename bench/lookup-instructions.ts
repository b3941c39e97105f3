/**
 * Drives N warm charged lookups of one interface through a real socket in this process, for
 * counting the CPU instructions they cost under valgrind (repeatable whatever else the machine
 * runs, unlike a timed bench). The measured lookups sit between two marker calls that callgrind
 * can be told about: `os.getPriority()` (libuv's uv_os_getpriority) just before them and
 * `os.setPriority()` (uv_os_setpriority) just after, so
 *
 *   valgrind --tool=callgrind --smc-check=all-non-file --zero-before=uv_os_getpriority \
 *     --dump-before=uv_os_setpriority node --single-threaded --import tsx bench/lookup-instructions.ts json 2000
 *
 * writes a dump (callgrind.out.PID.1) holding only those lookups: its `totals:` line divided by N
 * is the instructions per lookup, server and client together (the client is a few callbacks).
 * `--single-threaded` keeps the JIT's compiles on this thread, so they are counted; even after
 * WARM_UP=8000 they varied from 27,000 to 77,000 instructions per lookup between runs of the same
 * code, so compare the instructions outside V8's compiler (v8::internal::compiler and the like,
 * which varied 1.3% between two runs of one tree). The window lasts about 45 s under valgrind, so
 * periodic work (the webhook poll) weighs more than in a real run. Without valgrind it
 * prints the wall time and CPU per lookup of this one process, which the machine's load distorts.
 * Conditions as bench:json and bench:soap: LOG_LEVEL=warn, the sample dataset, one account; set
 * SQLITE_SYNCHRONOUS=normal to leave the disk's sync out.
 */
import { connect, type Socket } from 'node:net';
import { getPriority, setPriority } from 'node:os';
import { SAMPLE_DATASET_PATH } from '../src/bootstrap/seed.js';
import { createTestApp } from '../test/helpers/test-app.js';

const USERNAME = 'instructions';
const WARM_UP = Number(process.env.WARM_UP ?? 3000);

function http(head: string, headers: Record<string, string>, body = ''): Buffer {
  const lines = [head, 'Host: bench.test', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== '') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

function soapBody(): string {
  return (
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
    `<soap:Body><CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>FK482TR</RegistrationNumber><username>${USERNAME}</username></CheckFrance></soap:Body></soap:Envelope>`
  );
}

function requestOf(name: string, authorization: string): Buffer {
  switch (name) {
    case 'json':
      return http('GET /api/json.aspx/CheckFrance/FK482TR HTTP/1.1', { Authorization: authorization });
    case 'soap11':
      return http('POST /api/reg.asmx HTTP/1.1', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://regcheck.org.uk/CheckFrance"' }, soapBody());
    case 'http-get':
      return http(`GET /api/reg.asmx/CheckFrance?RegistrationNumber=FK482TR&username=${USERNAME} HTTP/1.1`, {});
    default:
      throw new Error(`unknown interface ${name}: json, soap11 or http-get`);
  }
}

/** Sends `count` requests one after another on a keep-alive socket; resolves after the last answer. */
function run(socket: Socket, request: Buffer, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let left = count;
    let buffered: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 'NaN');
      if (buffered.length < end + 4 + length) return;
      buffered = buffered.subarray(end + 4 + length);
      if (!head.startsWith('HTTP/1.1 200')) {
        socket.off('data', onData);
        reject(new Error(head));
        return;
      }
      left -= 1;
      if (left === 0) {
        socket.off('data', onData);
        resolve();
      } else socket.write(request);
    };
    socket.on('data', onData);
    socket.write(request);
  });
}

async function main(): Promise<void> {
  const name = process.argv[2] ?? 'json';
  const count = Number(process.argv[3] ?? 2000);
  const t = await createTestApp({ BASE_URL: 'http://bench.test', LOG_LEVEL: 'warn' });
  try {
    const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    if (!summary.committed) throw new Error('the sample dataset did not import');
    const apiKey = await t.account(USERNAME, 1_000_000_000);
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(Number(new URL(address).port), '127.0.0.1', () => {
        resolve(s);
      });
      s.once('error', reject);
    });
    socket.setNoDelay(true);
    const request = requestOf(name, t.basic(USERNAME, apiKey));
    await run(socket, request, WARM_UP);
    getPriority(); // marker: measured lookups start
    const started = performance.now();
    const cpu = process.cpuUsage();
    await run(socket, request, count);
    const used = process.cpuUsage(cpu);
    const ms = performance.now() - started;
    try {
      setPriority(0); // marker: measured lookups end (nothing else calls uv_os_setpriority)
    } catch {
      // Not allowed to change the priority: the call was made all the same, which is all the marker needs.
    }
    const cpuMicros = (used.user + used.system) / count;
    process.stdout.write(`${name}: ${count} lookups in ${ms.toFixed(0)} ms, ${cpuMicros.toFixed(1)} µs CPU each (server and client, one process)\n`);
    socket.destroy();
  } finally {
    await t.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
