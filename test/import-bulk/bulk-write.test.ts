import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NcapFileImporter } from '../../src/datasets/import/ncap-file-importer.js';
import { RdwCsvImporter } from '../../src/datasets/import/rdw-csv-importer.js';
import { RecordValidator } from '../../src/datasets/import/record-validator.js';
import type { StoredRecord } from '../../src/datasets/record.repository.js';
import type { Clock } from '../../src/shared/clock.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { fuelCsv, GOLF, GOLF_FUEL, NOTE, registerCsv } from './rdw-fixtures.js';

/** A clock that moves only when told, so a rewrite shows as a new updated_at. */
function steppingClock(): Clock & { step(): void } {
  let ms = Date.parse('2026-01-01T00:00:00Z');
  return {
    now: () => new Date(ms),
    step: () => {
      ms += 60_000;
    },
  };
}

const record = (key: string, document: string, source = 'test'): StoredRecord => ({ dataset: 'CheckNetherlands', lookupKey: key, document, source });

describe.each(ENGINES)('bulk writes on %s', (engine) => {
  let t: TestApp;
  let clock: ReturnType<typeof steppingClock>;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    clock = steppingClock();
    t = await createTestApp({}, clock, engine);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await t.close();
  });

  const write = (records: readonly StoredRecord[]): Promise<number> =>
    t.services.storage.transaction((tx) => t.services.records.upsertRecords(tx, records, clock.now().toISOString()));

  async function stored(): Promise<Array<{ key: string; document: string; source: string; updatedAt: string }>> {
    const rows = await t.services.storage.db.selectFrom('records').select(['lookup_key', 'document', 'source', 'updated_at']).orderBy('lookup_key').execute();
    return rows.map((r) => ({ key: r.lookup_key, document: r.document, source: r.source, updatedAt: r.updated_at }));
  }

  it('writes full statements and the remainder, counts what changed, and leaves unchanged records alone', async () => {
    // 250 records: two statements of 100 rows and 50 single-row ones.
    const records = Array.from({ length: 250 }, (_, i) => record(`K${String(i).padStart(4, '0')}`, `{"n":${i}}`));
    expect(await write(records)).toBe(250);
    const first = await stored();
    expect(first).toHaveLength(250);

    clock.step();
    expect(await write(records)).toBe(0);
    expect(await stored()).toEqual(first);

    clock.step();
    const changed = records.map((r, i) => (i === 7 ? { ...r, document: '{"n":"seven"}' } : i === 201 ? { ...r, source: 'other' } : r));
    expect(await write(changed)).toBe(2);
    const after = await stored();
    expect(after.filter((r, i) => r.updatedAt !== first[i]?.updatedAt).map((r) => r.key)).toEqual(['K0007', 'K0201']);
    expect(after[7]).toMatchObject({ document: '{"n":"seven"}' });
    expect(after[201]).toMatchObject({ source: 'other' });
  });

  it('takes several records with one key in one call, the last winning', async () => {
    const records = [record('DUP1', '{"v":1}'), ...Array.from({ length: 150 }, (_, i) => record(`R${i}`, '{}')), record('DUP1', '{"v":2}'), record('DUP1', '{"v":3}')];
    await write(records);
    const rows = await stored();
    expect(rows).toHaveLength(151);
    expect(rows.find((r) => r.key === 'DUP1')?.document).toBe('{"v":3}');
  });

  it('imports an RDW register with its fuel file, and again without rewriting anything', async () => {
    const register = join(t.dataDir, 'register.csv');
    const fuel = join(t.dataDir, 'fuel.csv');
    writeFileSync(register, registerCsv([GOLF, NOTE]));
    writeFileSync(fuel, fuelCsv([GOLF_FUEL]));
    const importer = new RdwCsvImporter(t.services.storage, t.services.records, t.services.catalogue, clock);
    const first = await importer.importFile(register, { skipInvalid: false, source: 'rdw', fuelPath: fuel });
    expect(first).toMatchObject({ committed: true, imported: 2, written: 2, withFuel: 1 });
    const before = await stored();
    clock.step();
    const second = await importer.importFile(register, { skipInvalid: false, source: 'rdw', fuelPath: fuel });
    expect(second).toMatchObject({ committed: true, imported: 2, written: 0, unchanged: 2 });
    expect(await stored()).toEqual(before);
    const golf = await t.services.records.findDocument('CheckNetherlands', 'AB123C');
    expect(golf === undefined ? undefined : JSON.parse(golf)).toMatchObject({ Description: 'VOLKSWAGEN GOLF', FuelType: { CurrentTextValue: 'Benzine' } });
  });

  it('imports Euro NCAP ratings from a file into the searched table', async () => {
    const file = join(t.dataDir, 'ratings.json');
    writeFileSync(file, JSON.stringify([{ Id: 1, Make: 'Volvo', Model: 'XC60', Year: 2017 }, { Make: 'Kia', Model: 'Niro' }]));
    const importer = new NcapFileImporter(new RecordValidator(t.services.catalogue), t.services.records, t.services.storage, clock);
    expect(await importer.importFile(file, { skipInvalid: false, source: 'ncap' })).toMatchObject({ committed: true, imported: 2 });
    expect(await t.services.records.findRatingsByMake('VOLVO')).toEqual([{ document: '{"Id":1,"Make":"Volvo","Model":"XC60","Year":2017}', modelNorm: 'XC60' }]);
    expect(await t.services.records.findRatingsByMake('KIA')).toHaveLength(1);
  });
});
