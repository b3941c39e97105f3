/**
 * `npm run bench:rdw-import`: how fast the RDW register import fills the embedded store (issue 4
 * asks for at least 50,000 rows/s).
 *
 * Generates an RDW "Gekentekende voertuigen" CSV of RDW_BENCH_ROWS rows (default 1,000,000) with
 * the export's real column labels, and the matching fuel CSV, then times, each on a fresh SQLite
 * store unless said otherwise:
 *   1. the import with --skip-invalid (one pass),
 *   2. the same file again into that store (every row unchanged),
 *   3. the default import (a checking pass, then the importing pass),
 *   4. the import with --fuel (the fuel file indexed first, then joined), by default and with
 *      --skip-invalid,
 * and, to justify how the fuel file is held, the heap a JavaScript Map of plate -> fuel would need
 * against the on-disk FuelIndex. Exits 1 when a run is below RDW_BENCH_MIN_ROWS_PER_S (default
 * 50,000) or a correctness check fails.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { registrationRule } from '../src/catalogue/input-rules.js';
import { CsvReader, isCsvProblem } from '../src/datasets/import/csv-reader.js';
import { RdwCsvImporter, type RdwImportOptions, type RdwImportSummary } from '../src/datasets/import/rdw-csv-importer.js';
import { FuelIndex } from '../src/datasets/import/rdw-fuel-index.js';
import { createServices } from '../src/services.js';
import { systemClock } from '../src/shared/clock.js';
import { openStorage } from '../src/storage/create-database.js';
import { generatedFuel, generatedPlate, writeGeneratedFuel, writeGeneratedRegister } from '../test/import-bulk/rdw-fixtures.js';

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer (got "${raw}")`);
  return value;
}

const ROWS = positiveInt('RDW_BENCH_ROWS', 1_000_000);
const MIN_RATE = positiveInt('RDW_BENCH_MIN_ROWS_PER_S', 50_000);

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

const failures: string[] = [];
function check(ok: boolean, what: string): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
}

const work = mkdtempSync(join(tmpdir(), 'rdw-bench-'));
const registerPath = join(work, 'Open_Data_RDW__Gekentekende_voertuigen.csv');
const fuelPath = join(work, 'Open_Data_RDW__Gekentekende_voertuigen_brandstof.csv');

interface Run {
  readonly name: string;
  readonly seconds: number;
  readonly rate: number;
  /** Rows per CPU-second of this process (all its threads): what the import costs, whatever else runs. */
  readonly cpuRate: number;
  readonly peakHeap: number;
  readonly summary: RdwImportSummary;
}

/** One import on the store in `dataDir`, timed, with the heap sampled at every progress call. */
async function timedImport(name: string, dataDir: string, options: Omit<RdwImportOptions, 'source'>): Promise<Run> {
  const storage = await openStorage({ dataDir });
  try {
    const services = createServices(storage, { clock: systemClock, requireApiKeyEverywhere: false });
    try {
    const importer = new RdwCsvImporter(storage, services.records, services.catalogue, systemClock);
    gc();
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const summary = await importer.importFile(registerPath, {
      ...options,
      source: 'bench',
      onProgress: () => {
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      },
    });
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const run = { name, seconds, rate: ROWS / seconds, cpuRate: ROWS / cpuSeconds, peakHeap: peak - baseline, summary };
    console.log(
      `  ${name}: ${seconds.toFixed(1)} s, ${Math.round(run.rate).toLocaleString('en')} rows/s; ${cpuSeconds.toFixed(1)} CPU-s, ${Math.round(run.cpuRate).toLocaleString('en')} rows per CPU-s; main-thread heap +${mib(run.peakHeap)} at most`,
    );
    // A few spot checks that the rows really landed, with their fuel where one was joined.
    for (const i of [0, Math.floor(ROWS / 2), ROWS - 1]) {
      const doc = await services.records.findDocument('CheckNetherlands', generatedPlate(i));
      const parsed = doc === undefined ? undefined : (JSON.parse(doc) as { FuelType?: { CurrentTextValue?: string } });
      const fuelOk = options.fuelPath === undefined ? parsed?.FuelType === undefined : parsed?.FuelType?.CurrentTextValue === generatedFuel(i);
      check(parsed !== undefined && fuelOk, `${name}: row ${i} (${generatedPlate(i)}) stored${options.fuelPath === undefined ? '' : ' with its fuel'}`);
    }
    return run;
    } finally {
      await services.close();
    }
  } finally {
    await storage.close();
  }
}

/** Heap needed to hold plate -> primary fuel in a Map, for comparison with FuelIndex. */
async function mapHeap(): Promise<{ bytes: number; seconds: number; plates: number }> {
  gc();
  const baseline = process.memoryUsage().heapUsed;
  const started = performance.now();
  const fuels = new Map<string, string>();
  for await (const batch of (await CsvReader.open(fuelPath)).rows()) {
    for (const record of batch) {
      if (isCsvProblem(record)) continue;
      const plate = registrationRule.normalise(record.fields[0] ?? '');
      // Interned fuel names, so the figure is the plates' cost alone.
      if (plate.ok && record.fields[1] === '1') fuels.set(plate.value, record.fields[2] === 'Diesel' ? 'Diesel' : 'Benzine');
    }
  }
  const seconds = (performance.now() - started) / 1000;
  gc();
  const bytes = process.memoryUsage().heapUsed - baseline;
  const plates = fuels.size;
  fuels.clear();
  return { bytes, seconds, plates };
}

async function main(): Promise<void> {
  console.log(`Generating ${ROWS.toLocaleString('en')} register rows and their fuel rows in ${work}`);
  let started = performance.now();
  writeGeneratedRegister(registerPath, ROWS);
  writeGeneratedFuel(fuelPath, ROWS);
  console.log(
    `  register ${mib(statSync(registerPath).size)}, fuel ${mib(statSync(fuelPath).size)} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  console.log('Imports');
  const storeA = join(work, 'store-a');
  const runs: Run[] = [];
  const oneGo = await timedImport('--skip-invalid, fresh store', storeA, { skipInvalid: true });
  runs.push(oneGo);
  check(oneGo.summary.written === ROWS && oneGo.summary.invalid === 0, `all ${ROWS} rows written, none invalid`);
  const again = await timedImport('same file again (all unchanged)', storeA, { skipInvalid: true });
  runs.push(again);
  check(again.summary.written === 0 && again.summary.unchanged === ROWS, 're-run wrote nothing and found every row unchanged');
  runs.push(await timedImport('default (checking + importing passes), fresh store', join(work, 'store-b'), { skipInvalid: false }));
  const withFuel = await timedImport('--fuel (fuel index, checking + importing passes), fresh store', join(work, 'store-c'), { skipInvalid: false, fuelPath });
  runs.push(withFuel);
  check(withFuel.summary.withFuel === ROWS, `every row got its fuel (${withFuel.summary.withFuel})`);
  const fuelOneGo = await timedImport('--fuel --skip-invalid, fresh store', join(work, 'store-d'), { skipInvalid: true, fuelPath });
  runs.push(fuelOneGo);
  check(fuelOneGo.summary.withFuel === ROWS, `every row got its fuel (${fuelOneGo.summary.withFuel})`);

  console.log('Fuel join: Map in the heap against FuelIndex on disk');
  const map = await mapHeap();
  console.log(`  Map: ${map.plates.toLocaleString('en')} plates, heap +${mib(map.bytes)} (${Math.round(map.bytes / map.plates)} bytes a plate), ${map.seconds.toFixed(1)} s`);
  gc();
  const baseline = process.memoryUsage().heapUsed;
  started = performance.now();
  const index = await FuelIndex.build(fuelPath, registrationRule);
  const seconds = (performance.now() - started) / 1000;
  gc();
  console.log(`  FuelIndex: ${index.summary.plates.toLocaleString('en')} plates, heap +${mib(process.memoryUsage().heapUsed - baseline)}, ${seconds.toFixed(1)} s`);
  started = performance.now();
  for (let i = 0; i < ROWS; i += 1) index.fuelOf(generatedPlate(i));
  console.log(`  FuelIndex lookups: ${((performance.now() - started) * 1000 / ROWS).toFixed(2)} µs each`);
  index.close();
  console.log(`  At the real register's ~16 M plates a Map would need ~${mib((map.bytes / map.plates) * 16e6)} of heap, and V8 refuses Maps of more than 2^24 entries.`);

  console.log('Result');
  for (const run of runs) check(run.rate >= MIN_RATE, `${run.name}: ${Math.round(run.rate).toLocaleString('en')} rows/s >= ${MIN_RATE.toLocaleString('en')}`);
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.log(`${failures.length} check(s) failed`);
  process.exitCode = 1;
}
