/**
 * `npm run bench:import`: rows per second of the three register imports (issue 25 targets
 * 150,000 rows/s into SQLite for each), into SQLite and into PostgreSQL (PG_TEST_URL, default
 * the test server; skipped with a note when it does not answer).
 *
 * Generates, in TMPDIR, IMPORT_BENCH_ROWS records (default 1,000,000) of each format:
 *   - RDW: the "Gekentekende voertuigen" CSV of bench:rdw-import (test/import-bulk/rdw-fixtures.ts),
 *     imported with --skip-invalid (one pass);
 *   - DMR: a ZIP of one ESStatistikListeModtag XML with one Statistik record per vehicle in the
 *     export's layout (test/import-bulk/register-fixtures.ts), every 10th plate also carried by a
 *     deregistered record;
 *   - Ukraine: a ZIP of one 2021-layout operations CSV, every 10th plate operated on twice;
 * then times each import into a fresh store, with the CPU time of this process beside the wall
 * time (the machine may be shared). IMPORT_BENCH_ONLY (a comma list of rdw, dmr, ukraine) and
 * IMPORT_BENCH_ENGINES (sqlite, postgres) narrow the run, e.g. to profile one import under
 * `node --cpu-prof --import tsx bench/import.bench.ts`. Exits 1 when a correctness check fails; the rate target is
 * reported, not enforced (bench/ never fails on speed alone: docs/benchmarks.md).
 */
import { once } from 'node:events';
import { closeSync, createWriteStream, existsSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yazl from 'yazl';
import { Catalogue } from '../src/catalogue/catalogue.js';
import { readDmrFile } from '../src/datasets/import/dmr-register.js';
import { RdwCsvImporter } from '../src/datasets/import/rdw-csv-importer.js';
import { registerTarget, StagedRegisterImporter, type RegisterImportSummary } from '../src/datasets/import/staged-register-importer.js';
import { readUkraineFiles } from '../src/datasets/import/ukraine-register.js';
import { RecordRepository } from '../src/datasets/record.repository.js';
import { systemClock } from '../src/shared/clock.js';
import { openStorage, type Storage } from '../src/storage/create-database.js';
import { freshPostgresDatabase, postgresAvailable } from '../test/helpers/engines.js';
import { writeGeneratedRegister } from '../test/import-bulk/rdw-fixtures.js';
import { dmrRecord, ua2021, UA_HEADER_2021 } from '../test/import-bulk/register-fixtures.js';

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer (got "${raw}")`);
  return value;
}

const ROWS = positiveInt('IMPORT_BENCH_ROWS', 1_000_000);

/** The members of a comma list in an environment variable, or all of `known` when it is unset. */
function listOf<T extends string>(name: string, known: readonly T[]): ReadonlySet<T> {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return new Set(known);
  const picked = raw.split(',').map((part) => part.trim());
  const unknown = picked.filter((part) => !(known as readonly string[]).includes(part));
  if (unknown.length > 0) throw new Error(`${name} takes ${known.join(', ')} (got "${unknown.join(', ')}")`);
  return new Set(picked as T[]);
}

const ONLY = listOf('IMPORT_BENCH_ONLY', ['rdw', 'dmr', 'ukraine'] as const);
const ENGINES = listOf('IMPORT_BENCH_ENGINES', ['sqlite', 'postgres'] as const);
const TARGET = 150_000;
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const work = mkdtempSync(join(tmpdir(), 'import-bench-'));
const catalogue = new Catalogue();

const failures: string[] = [];
function check(ok: boolean, what: string): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
}

/** Writes `count` lines from `line(i)` to a file, a megabyte at a time. */
function writeLines(path: string, first: string, count: number, line: (i: number) => string, last = ''): void {
  const fd = openSync(path, 'w');
  let buffer = `${first}\n`;
  for (let i = 0; i < count; i += 1) {
    buffer += `${line(i)}\n`;
    if (buffer.length > 1 << 20) {
      writeSync(fd, buffer);
      buffer = '';
    }
  }
  writeSync(fd, buffer + last);
  closeSync(fd);
}

const dmrPlate = (i: number): string => `D${i.toString(36).toUpperCase().padStart(6, '0')}`;
const uaPlate = (i: number): string => `АА${String(i).padStart(7, '0')}КТ`;

/** DMR records: ROWS vehicles plus a deregistered one for every 10th plate (the live one must win). */
async function generateDmr(zipPath: string): Promise<void> {
  const xml = join(work, 'ESStatistikListeModtag.xml');
  const live = (i: number): string =>
    dmrRecord({ id: String(i), plate: dmrPlate(i), status: 'Registreret', statusDate: '2020-04-20T23:00:00+01:00', make: 'SKODA', model: 'OCTAVIA', vin: `TMBJJ7NE3K${String(i).padStart(7, '0')}`, firstRegistered: '2019-05-03+02:00', cc: '1968.0', fuel: 'Diesel' });
  const dead = (i: number): string =>
    dmrRecord({ id: `X${i}`, plate: dmrPlate(i), status: 'Afmeldt', statusDate: '2023-01-01T00:00:00+01:00', make: 'BMW', model: '320', vin: String(i), firstRegistered: '1990-05-03+02:00', fuel: 'Benzin' });
  writeLines(xml, '<?xml version="1.0" encoding="UTF-8"?>\n<ns:ESStatistikListeModtag_I xmlns:ns="http://skat.dk/dmr/2007/05/31/"><ns:StatistikSamling>', ROWS, (i) => (i % 10 === 0 ? `${dead(i)}\n${live(i)}` : live(i)), '</ns:StatistikSamling></ns:ESStatistikListeModtag_I>\n');
  await writeZipFromFile(zipPath, xml, 'ESStatistikListeModtag.xml');
}

/** Ukraine: ROWS operations, every 10th plate with an earlier one too (the later must win). */
async function generateUkraine(zipPath: string): Promise<void> {
  const csv = join(work, 'reestrtz2021.csv');
  const op = (i: number, date: string, brand: string): string => ua2021({ date, brand, model: 'OCTAVIA A7', year: '2018', vin: `TMBAG7NE4J${String(i).padStart(7, '0')}`, plate: uaPlate(i), cc: '1395.0' });
  writeLines(csv, UA_HEADER_2021, ROWS, (i) => (i % 10 === 0 ? `${op(i, '16.04.2021', 'SKODA')}\n${op(i, '01.02.2021', 'OPEL')}` : op(i, '16.04.2021', 'SKODA')));
  await writeZipFromFile(zipPath, csv, 'reestrtz2021.csv');
}

async function writeZipFromFile(zipPath: string, file: string, name: string): Promise<void> {
  const zip = new yazl.ZipFile();
  zip.addFile(file, name);
  zip.end();
  const out = createWriteStream(zipPath);
  zip.outputStream.pipe(out);
  await once(out, 'close');
  rmSync(file);
}

interface Timed {
  readonly seconds: number;
  readonly cpuSeconds: number;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T } & Timed> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const value = await work();
  const used = process.cpuUsage(cpu);
  return { value, seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6 };
}

function report(engine: string, name: string, rows: number, t: Timed): number {
  const rate = rows / t.seconds;
  console.log(`  ${engine} ${name}: ${t.seconds.toFixed(1)} s, ${Math.round(rate).toLocaleString('en')} rows/s; ${t.cpuSeconds.toFixed(1)} CPU-s (${Math.round(rows / t.cpuSeconds).toLocaleString('en')} rows per CPU-s); target ${TARGET.toLocaleString('en')}: ${rate >= TARGET ? 'met' : 'not met'}`);
  return rate;
}

async function withStore(engine: 'sqlite' | 'postgres', name: string, work: (storage: Storage) => Promise<void>): Promise<void> {
  const pg = engine === 'postgres' ? await freshPostgresDatabase() : undefined;
  const storage = await openStorage({ dataDir: join(tmpdirFor(name)), ...(pg ? { databaseUrl: pg.url } : {}) });
  try {
    await work(storage);
  } finally {
    await storage.close();
    await pg?.drop();
  }
}

let stores = 0;
const tmpdirFor = (name: string): string => join(work, `store-${name}-${(stores += 1)}`);

async function benchEngine(engine: 'sqlite' | 'postgres', files: { rdw: string; dmr: string; ukraine: string }): Promise<void> {
  if (ONLY.has('rdw')) await withStore(engine, 'rdw', async (storage) => {
    const records = new RecordRepository(storage.db);
    const t = await timed(() => new RdwCsvImporter(storage, records, catalogue, systemClock).importFile(files.rdw, { skipInvalid: true, source: 'bench' }));
    report(engine, 'RDW (import-rdw --skip-invalid)', ROWS, t);
    check(t.value.written === ROWS, `${engine} RDW: ${ROWS} records written`);
  });
  for (const [format, name, operation, read] of [
    ['dmr', 'DMR (import-dmr)', 'CheckDenmark', (rule: Parameters<typeof readDmrFile>[1], sink: Parameters<typeof readDmrFile>[2]) => readDmrFile(files.dmr, rule, sink)],
    ['ukraine', 'Ukraine (import-ukraine)', 'CheckUkraine', (rule: Parameters<typeof readDmrFile>[1], sink: Parameters<typeof readDmrFile>[2]) => readUkraineFiles([files.ukraine], rule, sink)],
  ] as const) {
    if (!ONLY.has(format)) continue;
    await withStore(engine, operation, async (storage) => {
      const records = new RecordRepository(storage.db);
      const target = registerTarget(catalogue, operation);
      const phases: Record<string, number> = {};
      let phaseStart = performance.now();
      let phase = 'reading';
      const t = await timed<RegisterImportSummary>(() =>
        new StagedRegisterImporter(storage, records, systemClock, target.dataset).run((sink) => read(target.plateRule, sink), {
          source: 'bench',
          onProgress: (p) => {
            if (p.phase !== phase) {
              phases[phase] = (performance.now() - phaseStart) / 1000;
              phase = p.phase;
              phaseStart = performance.now();
            }
          },
        }),
      );
      phases[phase] = (performance.now() - phaseStart) / 1000;
      report(engine, name, t.value.rowsRead, t);
      console.log(`    ${t.value.rowsRead.toLocaleString('en')} records read, ${t.value.records.toLocaleString('en')} plates; reading (parse + scratch file) ${phases.reading?.toFixed(1)} s, writing (sort + store) ${phases.writing?.toFixed(1)} s`);
      check(t.value.records === ROWS && t.value.written === ROWS, `${engine} ${name}: ${ROWS} plates written`);
      const probe = operation === 'CheckDenmark' ? dmrPlate(0) : target.plateRule.normalise(uaPlate(0));
      const key = typeof probe === 'string' ? probe : probe.ok ? probe.value : '';
      const doc = await records.findDocument(target.dataset, key);
      check(doc !== undefined && doc.includes('SKODA'), `${engine} ${name}: the later/live record of a repeated plate kept`);
    });
  }
}

async function main(): Promise<void> {
  console.log(`Generating ${ROWS.toLocaleString('en')} records of each format in ${work} (machine: ${(await import('node:os')).cpus().length} cores, shared)`);
  const files = { rdw: join(work, 'rdw.csv'), dmr: join(work, 'ESStatistikListeModtag-20260906-120000.zip'), ukraine: join(work, 'reestrTZ2021.zip') };
  const started = performance.now();
  if (ONLY.has('rdw')) writeGeneratedRegister(files.rdw, ROWS);
  if (ONLY.has('dmr')) await generateDmr(files.dmr);
  if (ONLY.has('ukraine')) await generateUkraine(files.ukraine);
  const size = (path: string): string => (existsSync(path) ? mib(statSync(path).size) : '-');
  console.log(`  RDW ${size(files.rdw)}, DMR zip ${size(files.dmr)}, Ukraine zip ${size(files.ukraine)} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (ENGINES.has('sqlite')) {
    console.log('SQLite');
    await benchEngine('sqlite', files);
  }
  if (!ENGINES.has('postgres')) return;
  if (await postgresAvailable()) {
    console.log('PostgreSQL');
    await benchEngine('postgres', files);
  } else console.log('PostgreSQL: not reachable (PG_TEST_URL), skipped');
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
