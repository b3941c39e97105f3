import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RdwCsvImporter, SORTED_ROWS, type RdwImportOptions } from '../../src/datasets/import/rdw-csv-importer.js';
import { BATCHES_IN_FLIGHT } from '../../src/datasets/import/rdw-reader.protocol.js';
import { SINK_ROWS } from '../../src/datasets/import/rdw-row-source.js';
import type { RecordRepository } from '../../src/datasets/record.repository.js';
import { systemClock } from '../../src/shared/clock.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { generatedFuelRows, generatedPlate, writeGeneratedFuel, writeGeneratedRegister } from './rdw-fixtures.js';

const ROWS = 12_000;
/** Hybrids have a second fuel row. */
const FUEL_ROWS = Array.from({ length: ROWS }, (_, i) => generatedFuelRows(i).length).reduce((a, b) => a + b, 0);
const READERS = ['worker', 'this-thread'] as const satisfies ReadonlyArray<RdwImportOptions['readOn']>;

let app: TestApp;
let register: string;
let fuel: string;

beforeEach(async () => {
  app = await createTestApp();
  register = join(app.dataDir, 'register.csv');
  fuel = join(app.dataDir, 'fuel.csv');
  writeGeneratedRegister(register, ROWS);
  writeGeneratedFuel(fuel, ROWS);
});
afterEach(async () => {
  await app.close();
});

async function documents(): Promise<string[]> {
  const rows = await app.services.storage.db.selectFrom('records').select(['lookup_key', 'document']).where('dataset', '=', 'CheckNetherlands').orderBy('lookup_key').execute();
  return rows.map((r) => `${r.lookup_key} ${r.document}`);
}

describe('the reading thread', () => {
  it('stores the same records whether the files are read on a worker thread or on this one', { timeout: 120_000 }, async () => {
    const importer = new RdwCsvImporter(app.services.storage, app.services.records, app.services.catalogue, systemClock);
    const results = [];
    const stored = [];
    for (const readOn of READERS) {
      await app.services.storage.db.deleteFrom('records').execute();
      const progress: string[] = [];
      results.push(
        await importer.importFile(register, {
          skipInvalid: false,
          source: 'rdw',
          fuelPath: fuel,
          readOn,
          onProgress: (p) => progress.push(`${p.phase} ${p.rows}`),
        }),
      );
      stored.push(await documents());
      expect(progress, readOn).toEqual(['fuel 10000', `fuel ${FUEL_ROWS}`, 'checking 10000', `checking ${ROWS}`, 'importing 10000', `importing ${ROWS}`]);
    }
    expect(results[0]).toMatchObject({ committed: true, imported: ROWS, written: ROWS, withFuel: ROWS });
    expect(results[1]).toEqual(results[0]);
    expect(stored[0]).toHaveLength(ROWS);
    expect(stored[1]).toEqual(stored[0]);
  });

  it.each(READERS)('gives up cleanly when writing fails (reading on %s)', { timeout: 60_000 }, async (readOn) => {
    let calls = 0;
    const failing = {
      upsertRecords: () => {
        calls += 1;
        return calls === 3 ? Promise.reject(new Error('disk full')) : Promise.resolve(0);
      },
    } as unknown as RecordRepository;
    const importer = new RdwCsvImporter(app.services.storage, failing, app.services.catalogue, systemClock);
    // The reader is held up by the writer once BATCHES_IN_FLIGHT batches wait: it must be let go.
    // Its runs of SORTED_ROWS: a register longer than the three the writer takes before failing
    // and the batches in flight, so the reader is waiting when the writer fails.
    const long = join(app.dataDir, 'long-register.csv');
    writeGeneratedRegister(long, 4 * SORTED_ROWS + BATCHES_IN_FLIGHT * SINK_ROWS);
    await expect(importer.importFile(long, { skipInvalid: true, source: 'rdw', readOn })).rejects.toThrow('disk full');
    expect(calls).toBe(3);
    // And the store is usable afterwards.
    expect(await app.services.records.findDocument('CheckNetherlands', generatedPlate(0))).toBeUndefined();
  });

  it.each(READERS)('deletes its fuel index when writing fails (reading on %s)', { timeout: 60_000 }, async (readOn) => {
    const scratch = join(app.dataDir, 'tmp');
    mkdirSync(scratch);
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = scratch;
    try {
      const failing = { upsertRecords: () => Promise.reject(new Error('disk full')) } as unknown as RecordRepository;
      const importer = new RdwCsvImporter(app.services.storage, failing, app.services.catalogue, systemClock);
      await expect(importer.importFile(register, { skipInvalid: true, source: 'rdw', fuelPath: fuel, readOn })).rejects.toThrow('disk full');
      // (tsx, which loads the worker's TypeScript, keeps its cache there too.)
      expect(readdirSync(scratch).filter((name) => name.startsWith('vehicle-lookup-fuel-'))).toEqual([]);
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
    }
  });
});
