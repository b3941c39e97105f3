/**
 * `npm run bench:json`: JSON lookups (auth, SQLite reads, a credit debit per request) against a
 * bare Fastify route answering the same bytes (bench/bare-route.ts), in the same run. Target:
 * the lookup reaches at least half the bare route's throughput.
 *
 * Every server runs in its own child process; autocannon runs here (bench/bench-support.ts). The
 * store is prepared with the project's own code, then served by the real entry point
 * (src/main.ts), as `npm start` runs it.
 *
 * The lookup is measured twice: without an Idempotency-Key, and with a new key on every request
 * (each a first, charged lookup that claims its key and stores its answer with the debit);
 * BENCH_IDEMPOTENCY_KEY=absent or present runs only one of them.
 *
 * Environment: BENCH_CONNECTIONS (32), BENCH_DURATION (10 s per measured run), BENCH_WARMUP (2 s),
 * BENCH_ROUNDS (2), BENCH_PIN (true: a core each for the load generator and the servers, see
 * pinCores), BENCH_CPU_PROF (a directory: run the service with `node --cpu-prof` and leave its
 * .cpuprofile there; bench/cpu-profile-summary.ts reads it). Exit code 0 whatever the throughput ratio (it is a benchmark); 1 when a server
 * fails to start or a correctness check fails (non-2xx answers, wrong body, credits not debited
 * exactly once per answered lookup).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { DEMO_EXAMPLE_PATH } from '../src/bootstrap/seed.js';
import {
  Checks,
  makeTempDir,
  pinCores,
  idempotencyKeyTargets,
  positiveInt,
  prepareStore,
  roundRatiosLine,
  runBench,
  startBareRoute,
  startService,
  START_CREDITS,
  table,
  TABLE_LEGEND,
  warmUpAndMeasure,
  type Server,
  type Target,
} from './bench-support.js';

const TARGET_RATIO = 0.5;
/** A plate of the bundled sample dataset (the first-start banner's example): each answer costs 1. */
const LOOKUP_PATH = DEMO_EXAMPLE_PATH;

async function main(): Promise<number> {
  const connections = positiveInt('BENCH_CONNECTIONS', 32);
  const duration = positiveInt('BENCH_DURATION', 10);
  const warmup = positiveInt('BENCH_WARMUP', 2);
  const rounds = positiveInt('BENCH_ROUNDS', 2);
  const checks = new Checks();

  console.log(`json lookup benchmark: GET ${LOOKUP_PATH}`);
  console.log(`  node ${process.version}, ${cpus().length} CPUs; ${connections} connections, ${duration} s per run, ${warmup} s warm-up, ${rounds} round(s)`);
  console.log(`  ${pinCores()}`);
  console.log('  request logging at info level is off for both servers (LOG_LEVEL=warn): at info Fastify writes');
  console.log('  two log lines per request to stdout, the same cost for any route, which would measure the logger');
  console.log('  and the pipe to this process rather than the lookup.');

  const work = makeTempDir('vehicle-lookup-bench-');
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);
  const account = await prepareStore(dataDir);
  console.log(`  store: ${account.sampleRecords} sample records, account "${account.username}" with ${START_CREDITS} credits`);

  const nodeArgs: string[] = [];
  const cpuProfDir = process.env.BENCH_CPU_PROF?.trim();
  if (cpuProfDir !== undefined && cpuProfDir !== '') {
    const dir = resolve(cpuProfDir);
    mkdirSync(dir, { recursive: true });
    nodeArgs.push('--cpu-prof', '--cpu-prof-dir', dir);
    console.log(`  profiling the service: its .cpuprofile goes to ${dir} when it stops`);
  }
  const service = await startService(dataDir, nodeArgs);
  const authorization = `Basic ${Buffer.from(`${account.username}:${account.apiKey}`).toString('base64')}`;

  // One real lookup: its body and content type are what the bare route answers.
  const sample = await fetch(`${service.baseUrl}${LOOKUP_PATH}`, { headers: { authorization } });
  const body = Buffer.from(await sample.arrayBuffer());
  const contentType = sample.headers.get('content-type') ?? '';
  if (sample.status !== 200) throw new Error(`the service answered ${sample.status} to ${LOOKUP_PATH}: ${body.toString('utf8')}`);
  const bodyFile = join(work, 'body.json');
  writeFileSync(bodyFile, body);

  const bare = await startBareRoute({ method: 'GET', path: LOOKUP_PATH, bodyFile, contentType });

  console.log(`  body: ${body.length} bytes, ${contentType}`);
  console.log('\ncorrectness');
  const bareSample = await fetch(`${bare.baseUrl}${LOOKUP_PATH}`);
  const bareBody = Buffer.from(await bareSample.arrayBuffer());
  checks.check(
    bareBody.equals(body) && bareSample.headers.get('content-type') === contentType,
    'the bare route answers the same body bytes and content type as the lookup',
  );

  // Every target gets the same request bytes; the bare route ignores the credentials.
  const target = (label: string, server: Server): Target => ({ label, server, path: LOOKUP_PATH, headers: { authorization } });
  const bareTarget = target('bare route', bare);
  const which = idempotencyKeyTargets();
  const lookupTargets: Target[] = [
    ...(which.absent ? [target('json lookup', service)] : []),
    ...(which.present ? [{ ...target('json + Idem-Key', service), idempotencyKeys: true as const }] : []),
  ];
  const targets = [bareTarget, ...lookupTargets];

  const measured = await warmUpAndMeasure(targets, checks, {
    connections,
    warmupSeconds: warmup,
    duration,
    rounds,
    expectBody: () => body.toString('utf8'),
    paid: { targets: lookupTargets, service, username: account.username },
  });
  if (!measured) return 1;

  const bareBest = measured.best(bareTarget);
  console.log(`\nevery run (${TABLE_LEGEND})`);
  console.log(table(measured.runs.map((r) => r.run)));
  console.log(`\nbest of ${rounds} round(s)`);
  console.log(table([bareBest, ...lookupTargets.map((t) => measured.best(t))]));
  console.log('');
  for (const lookupTarget of lookupTargets) {
    const best = measured.best(lookupTarget);
    const ratio = best.rps / bareBest.rps;
    const name = `${lookupTarget.label} / bare`;
    console.log(`${name} = ${ratio.toFixed(2)} (${best.rps.toFixed(0)} / ${bareBest.rps.toFixed(0)} req/s): ${ratio >= TARGET_RATIO ? 'PASS' : 'FAIL'} (target >= ${TARGET_RATIO})`);
    console.log(roundRatiosLine(name, measured.roundRatios(lookupTarget, bareTarget)));
    const bareCost = bareBest.serverUsPerRequest;
    const cost = best.serverUsPerRequest;
    if (bareCost !== undefined && cost !== undefined) {
      // What the ratio would be with each server alone on a core: the figure to read when other
      // load (see "other CPU") has starved one of the runs.
      console.log(`  by server CPU per request: bare ${bareCost.toFixed(1)} µs, ${lookupTarget.label} ${cost.toFixed(1)} µs; bare / lookup = ${(bareCost / cost).toFixed(2)}`);
    }
  }

  if (checks.failed()) {
    console.log(`\ncorrectness checks failed: ${checks.failures.length}`);
    return 1;
  }
  return 0;
}

runBench('bench:json', main);
