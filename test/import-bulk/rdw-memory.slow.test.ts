import { statSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registrationRule } from '../../src/catalogue/input-rules.js';
import { withServices } from '../../src/cli/cli-context.js';
import { RdwCsvImporter } from '../../src/datasets/import/rdw-csv-importer.js';
import { FuelIndex } from '../../src/datasets/import/rdw-fuel-index.js';
import { systemClock } from '../../src/shared/clock.js';
import { tempDir } from '../helpers/test-app.js';
import { generatedFuel, generatedPlate, writeGeneratedFuel, writeGeneratedRegister } from './rdw-fixtures.js';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

/** Live memory of this process that grows with what a program keeps: the heap and array buffers. */
function live(): number {
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

const MiB = 1024 * 1024;

let dir: { path: string; remove: () => void };
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => {
  dir.remove();
});

describe('memory', () => {
  it('imports a register far larger than the bound, with its fuel file, in flat memory', { timeout: 300_000 }, async () => {
    const ROWS = 250_000;
    // Each generated row is ~630 bytes like the real export's: a 150 MB file, while the live memory
    // the import may keep at any time stays under 40 MB (after a forced collection, so garbage
    // awaiting collection does not count).
    const BOUND = 40 * MiB;
    const register = join(dir.path, 'register.csv');
    const fuel = join(dir.path, 'fuel.csv');
    writeGeneratedRegister(register, ROWS);
    writeGeneratedFuel(fuel, ROWS);
    expect(statSync(register).size).toBeGreaterThan(3.5 * BOUND);

    const env = { DATA_DIR: join(dir.path, 'store'), LOG_LEVEL: 'silent' };
    const summary = await withServices(env, async (services) => {
      const importer = new RdwCsvImporter(services.storage, services.records, services.catalogue, systemClock);
      const baseline = live();
      let peak = 0;
      const samples: number[] = [];
      const result = await importer.importFile(register, {
        skipInvalid: false,
        source: 'memory-test',
        fuelPath: fuel,
        // Read on this thread, so its heap is the one measured (a worker's heap is its own).
        readOn: 'this-thread',
        // Every 25,000 rows of each phase: ten samples per pass.
        progressEvery: 25_000,
        onProgress: () => {
          const growth = live() - baseline;
          samples.push(growth);
          peak = Math.max(peak, growth);
        },
      });
      expect(samples.length).toBeGreaterThanOrEqual(30);
      expect(peak, `live memory grew by ${(peak / MiB).toFixed(1)} MiB`).toBeLessThan(BOUND);
      // Flat, not merely small: the last pass ends no higher than its first tenth plus a margin.
      const last = samples.slice(-10);
      expect(Math.max(...last) - (last[0] ?? 0)).toBeLessThan(10 * MiB);
      const doc = await services.records.findDocument('CheckNetherlands', generatedPlate(ROWS - 1));
      expect(doc === undefined ? undefined : JSON.parse(doc)).toMatchObject({ FuelType: { CurrentTextValue: generatedFuel(ROWS - 1) } });
      return result;
    });
    expect(summary).toMatchObject({ committed: true, rowsRead: ROWS, imported: ROWS, written: ROWS, invalid: 0, withFuel: ROWS });
  });

  it('indexes a million fuel plates without keeping them in memory', { timeout: 300_000 }, async () => {
    const PLATES = 1_000_000;
    // A Map of plate -> fuel would need ~53 bytes a plate, 50 MB here (bench:rdw-import measures
    // it), growing by ~45 MB between the first sample (100,000 rows) and the last. The index keeps
    // what one chunk of the file needs, whatever the number of plates; the margins allow for
    // compiled code and stream buffers, which vary from run to run.
    const fuel = join(dir.path, 'fuel.csv');
    writeGeneratedFuel(fuel, PLATES);
    const baseline = live();
    const samples: number[] = [];
    const index = await FuelIndex.build(fuel, registrationRule, {
      progressEvery: 100_000,
      onProgress: () => {
        samples.push(live() - baseline);
      },
    });
    try {
      expect(index.summary).toMatchObject({ plates: PLATES, invalid: 0 });
      expect(index.fuelOf(generatedPlate(PLATES - 1))).toBe(generatedFuel(PLATES - 1));
      expect(samples.length).toBeGreaterThanOrEqual(10);
      const first = samples[0] ?? 0;
      const peak = Math.max(...samples);
      expect(peak - first, `grew by ${((peak - first) / MiB).toFixed(1)} MiB after the first 100,000 rows`).toBeLessThan(12 * MiB);
      expect(peak, `live memory grew by ${(peak / MiB).toFixed(1)} MiB`).toBeLessThan(32 * MiB);
    } finally {
      index.close();
    }
  });
});
