import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { RecordRepository } from '../../src/datasets/record.repository.js';
import { readDmrFile } from '../../src/datasets/import/dmr-register.js';
import { registerTarget, StagedRegisterImporter } from '../../src/datasets/import/staged-register-importer.js';
import { operationDate, readUkraineFiles } from '../../src/datasets/import/ukraine-register.js';
import { progressLine } from '../../src/cli/commands/import-register.command.js';
import { systemClock } from '../../src/shared/clock.js';
import { cli, json, type CliRun } from '../cli/cli-harness.js';
import { enginesToTest, freshStorage } from '../helpers/engines.js';
import { createTestApp, tempDir, type TestApp } from '../helpers/test-app.js';
import { dmrRecord, dmrXml, ua2013, ua2021, ua2026, UA_HEADER_2013, UA_HEADER_2021, UA_HEADER_2026, writeZip, type DmrVehicle } from './register-fixtures.js';

/**
 * `import-ukraine` and `import-dmr` (issue 25) on small files the tests write: layouts, the record
 * kept per plate, re-runs, and files that stop the import with nothing written.
 */

interface Summary {
  rowsRead: number;
  records: number;
  written: number;
  unchanged: number;
  skipped: Record<string, number>;
}

let app: TestApp;
let apiKey: string;
let env: Record<string, string>;

beforeEach(async () => {
  app = await createTestApp();
  apiKey = await app.account('importer', 1000);
  env = { DATA_DIR: app.dataDir, LOG_LEVEL: 'silent' };
});

afterEach(async () => {
  await app.close();
  process.exitCode = undefined;
});

function write(name: string, text: string | Buffer): string {
  const path = join(app.dataDir, name);
  writeFileSync(path, text);
  return path;
}

async function run(...argv: string[]): Promise<CliRun> {
  return cli(env, argv);
}

async function importJson(...argv: string[]): Promise<Summary & { code: number }> {
  const r = await run(...argv, '--json');
  return { ...(json(r) as Summary), code: r.code };
}

async function stored(dataset: string, key: string): Promise<Record<string, unknown> | undefined> {
  const doc = await app.services.records.findDocument(dataset, key);
  return doc === undefined ? undefined : (JSON.parse(doc) as Record<string, unknown>);
}

function lookup(operation: string, plate: string) {
  return app.app.inject({ method: 'GET', url: `/api/json.aspx/${operation}/${encodeURIComponent(plate)}`, headers: { authorization: app.basic('importer', apiKey) } });
}

/** Windows-1251 bytes of text made of ASCII and Ukrainian Cyrillic letters. */
function cp1251(text: string): Buffer {
  const special: Record<string, number> = { І: 0xb2, і: 0xb3, Ї: 0xaf, ї: 0xbf, Є: 0xaa, є: 0xba };
  return Buffer.from(
    Array.from(text, (c) => {
      const code = c.charCodeAt(0);
      if (code < 0x80) return code;
      if (special[c] !== undefined) return special[c];
      if (code >= 0x410 && code <= 0x44f) return code - 0x410 + 0xc0;
      throw new Error(`no cp1251 byte for ${c}`);
    }),
  );
}

const OCTAVIA = { brand: 'SKODA', model: 'OCTAVIA A7', year: '2018', vin: 'TMBAG7NE4J0482175', cc: '1395.0' };

describe('import-ukraine', () => {
  it('reads the three header layouts and their date formats, keeps the latest operation of each plate, and folds Cyrillic plates to one key', async () => {
    const early = write('tz2015.csv', [UA_HEADER_2013, ua2013({ date: '2015-03-02', brand: 'RENAULT', model: 'MEGANE', year: '2012', plate: 'АА4821КТ' })].join('\n'));
    const zip = join(app.dataDir, 'reestrTZ2021.zip');
    await writeZip(zip, [
      ['reestrtz2021.csv', [UA_HEADER_2021, ua2021({ ...OCTAVIA, date: '16.04.2021', plate: 'AA4821KT' }), ua2021({ ...OCTAVIA, brand: 'BMW', model: 'X5', date: '01.02.21', plate: 'ВС3172ЕІ', fuel: 'ДИЗЕЛЬНЕ ПАЛИВО' })].join('\r\n')],
    ]);
    const late = write('tz2026.csv', [UA_HEADER_2026, ua2026({ date: '03.07.26', brand: 'TESLA', model: 'MODEL Y', year: '2024', vin: '5YJ3E1EA7KF000001' })].join('\n'));
    const summary = await importJson('import-ukraine', zip, early, late);
    expect(summary).toMatchObject({ code: 0, rowsRead: 4, records: 2, written: 2, unchanged: 0 });
    expect(Object.entries(summary.skipped)).toEqual([[expect.stringMatching(/without a plate.*2026/), 1]]);
    // The 2021 operation is later than the 2015 one for the same plate, written in Cyrillic then in Latin letters.
    expect(await stored('CheckUkraine', 'AA4821KT')).toEqual({
      Description: 'SKODA OCTAVIA A7', RegistrationYear: '2018', CarMake: { CurrentTextValue: 'SKODA' }, CarModel: { CurrentTextValue: 'OCTAVIA A7' },
      MakeDescription: 'SKODA', ModelDescription: 'OCTAVIA A7', EngineSize: { CurrentTextValue: '1395' }, FuelType: { CurrentTextValue: 'БЕНЗИН' },
      Colour: 'СІРИЙ', RegistrationDate: '2021-04-16', Department: 'ТСЦ 8041', VechileIdentificationNumber: 'TMBAG7NE4J0482175',
    });
    // A client may type the plate in either script: both find it.
    for (const typed of ['ВС3172ЕІ', 'BC3172EI', 'вс 3172 еі']) {
      const res = await lookup('CheckUkraine', typed);
      expect(res.statusCode, typed).toBe(200);
      expect(JSON.parse(res.body), typed).toMatchObject({ Description: 'BMW X5', RegistrationDate: '2021-02-01' });
    }
  });

  it('keeps the later of two operations of one plate whatever the order of the files, and leaves unchanged records alone on a re-run', async () => {
    const a = write('a.csv', [UA_HEADER_2013, ua2013({ date: '2018-06-01', brand: 'FORD', model: 'FOCUS', year: '2010', plate: 'KA0001AB' })].join('\n'));
    const b = write('b.csv', [UA_HEADER_2013, ua2013({ date: '2016-01-01', brand: 'OPEL', model: 'ASTRA', year: '2005', plate: 'KA0001AB' })].join('\n'));
    expect(await importJson('import-ukraine', a, b)).toMatchObject({ code: 0, records: 1, written: 1 });
    expect(await stored('CheckUkraine', 'KA0001AB')).toMatchObject({ Description: 'FORD FOCUS' });
    const before = await app.services.storage.db.selectFrom('records').select('updated_at').where('lookup_key', '=', 'KA0001AB').executeTakeFirstOrThrow();
    expect(await importJson('import-ukraine', b, a)).toMatchObject({ code: 0, records: 1, written: 0, unchanged: 1 });
    const after = await app.services.storage.db.selectFrom('records').select('updated_at').where('lookup_key', '=', 'KA0001AB').executeTakeFirstOrThrow();
    expect(after.updated_at).toBe(before.updated_at);
  });

  it('reads a Windows-1251 file as well as UTF-8', async () => {
    const path = write('cp1251.csv', cp1251([UA_HEADER_2013, ua2013({ date: '2014-05-05', brand: 'ЗАЗ', model: 'ЛАНОС', year: '2008', plate: 'АІ1234ВВ' })].join('\n')));
    expect(await importJson('import-ukraine', path)).toMatchObject({ code: 0, records: 1 });
    expect(await stored('CheckUkraine', 'AI1234BB')).toMatchObject({ Description: 'ЗАЗ ЛАНОС', Colour: 'СІРИЙ' });
  });

  it('stops at a malformed or cut-short file with its line, and writes nothing of any file', async () => {
    const good = write('good.csv', [UA_HEADER_2013, ua2013({ date: '2015-01-01', brand: 'FORD', model: 'FIESTA', year: '2011', plate: 'AA1111AA' })].join('\n'));
    const cut = write('cut.csv', [UA_HEADER_2013, ua2013({ date: '2015-01-01', brand: 'KIA', model: 'RIO', year: '2011', plate: 'AA2222AA' }), 'P;8036100000;100;ПЕРВИННА;2015-01-0'].join('\n'));
    let r = await run('import-ukraine', good, cut);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cut\.csv: line 3: has 5 fields, the header has 19 .*nothing was imported/);
    const badDate = write('date.csv', [UA_HEADER_2013, ua2013({ date: '2015/01/01', brand: 'KIA', model: 'RIO', year: '2011', plate: 'AA2222AA' })].join('\n'));
    r = await run('import-ukraine', good, badDate);
    expect(r.err).toMatch(/date\.csv: line 2: D_REG "2015\/01\/01" is not a date/);
    const notMvs = write('other.csv', 'kenteken;merk\nAB12;VW\n');
    r = await run('import-ukraine', notMvs);
    expect(r.err).toMatch(/other\.csv: not an MVS registration-operations file: no D_REG, BRAND, MODEL, MAKE_YEAR column/);
    const damaged = write('damaged.zip', readFileSync(good).subarray(0, 0));
    r = await run('import-ukraine', damaged);
    expect(r.code).toBe(1);
    const truncatedZip = join(app.dataDir, 'truncated.zip');
    await writeZip(truncatedZip, [['reestrtz2021.csv', [UA_HEADER_2021, ...Array.from({ length: 200 }, (_, i) => ua2021({ ...OCTAVIA, date: '16.04.2021', plate: `AA${String(i).padStart(4, '0')}KT` }))].join('\n')]]);
    write('truncated.zip', readFileSync(truncatedZip).subarray(0, 900));
    r = await run('import-ukraine', truncatedZip);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/truncated\.zip.*nothing was imported/);
    expect((await app.services.records.countByDataset()).CheckUkraine ?? 0).toBe(0);
  });

  it('reads the three date formats', () => {
    expect(operationDate('2016-03-09')).toBe('2016-03-09');
    expect(operationDate('09.03.2020')).toBe('2020-03-09');
    expect(operationDate('09.03.24')).toBe('2024-03-09');
    expect(operationDate('31.13.24')).toBeUndefined();
  });
});

const LIVE_FERRARI: DmrVehicle = {
  id: '1007801199310004', plate: 'ZU47209', status: 'Registreret', statusDate: '2009-04-20T23:00:00+01:00', make: 'FERRARI', model: '348', variant: 'TS',
  vin: 'ZFFKA36B000096243', firstRegistered: '1993-05-03+02:00', cc: '3405.0', fuel: 'Benzin',
};
const OLD_BMW: DmrVehicle = {
  id: '1002601198110653', plate: 'ZU47209', status: 'Afmeldt', statusDate: '2021-12-18T00:00:00.000+01:00', make: 'BMW', model: '320', vin: '7729417', firstRegistered: '1981-05-13+02:00', fuel: 'Benzin',
};

describe('import-dmr', () => {
  it('streams the ZIP, keeps the live record of a plate a deregistered vehicle also carries, and answers in the original\'s shape', async () => {
    const zip = join(app.dataDir, 'ESStatistikListeModtag-20260906-120000.zip');
    // The deregistered BMW comes after the live Ferrari and has the later status date: the live one still wins.
    await writeZip(zip, [['ESStatistikListeModtag.xml', dmrXml([dmrRecord(LIVE_FERRARI), dmrRecord(OLD_BMW), dmrRecord({ ...OLD_BMW, id: '3', plate: undefined }), dmrRecord({ ...OLD_BMW, id: '4', plate: 'AB12345', make: undefined })])]]);
    const summary = await importJson('import-dmr', zip);
    expect(summary).toMatchObject({ code: 0, rowsRead: 4, records: 1, written: 1, unchanged: 0 });
    expect(Object.values(summary.skipped)).toEqual([1, 1]);
    const res = await lookup('CheckDenmark', 'zu 47209');
    expect(res.statusCode).toBe(200);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      ABICode: '', Description: 'FERRARI 348 TS', RegistrationYear: '1993', CarMake: { CurrentTextValue: 'FERRARI' }, CarModel: { CurrentTextValue: '348' },
      EngineSize: { CurrentTextValue: '3405.0' }, FuelType: { CurrentTextValue: 'Benzin' }, MakeDescription: { CurrentTextValue: 'FERRARI' },
      ModelDescription: { CurrentTextValue: '348' }, VechileIdentificationNumber: 'ZFFKA36B000096243',
    });
    expect(body.ExtendedInformation).toMatchObject({
      '@xmlns': 'http://skat.dk/dmr/2007/05/31/', KoeretoejIdent: '1007801199310004', KoeretoejRegistreringStatus: 'Registreret',
      KoeretoejOplysningGrundStruktur: { KoeretoejBetegnelseStruktur: { KoeretoejMaerkeTypeNavn: 'FERRARI', Model: { KoeretoejModelTypeNavn: '348' } } },
    });
    // Re-run: nothing rewritten.
    expect(await importJson('import-dmr', zip)).toMatchObject({ code: 0, records: 1, written: 0, unchanged: 1 });
  });

  it('keeps the newest deregistered record of a plate when none is live', async () => {
    const older = { ...OLD_BMW, statusDate: '2001-01-01T00:00:00.000+01:00', model: '318' };
    const path = write('dmr.xml', dmrXml([dmrRecord(OLD_BMW), dmrRecord(older)]));
    expect(await importJson('import-dmr', path)).toMatchObject({ code: 0, records: 1 });
    expect(await stored('CheckDenmark', 'ZU47209')).toMatchObject({ Description: 'BMW 320' });
  });

  it('stops at malformed or cut-short XML with the record number, and writes nothing', async () => {
    const records = [dmrRecord(LIVE_FERRARI), dmrRecord({ ...OLD_BMW, plate: 'CX31902' }), dmrRecord({ ...OLD_BMW, plate: 'BK48217' })];
    const malformed = write('malformed.xml', dmrXml([records[0] ?? '', (records[1] ?? '').replace('</ns:KoeretoejIdent>', '</ns:KoeretoejIdnt>'), records[2] ?? '']));
    let r = await run('import-dmr', malformed);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/malformed\.xml: record 2: .*nothing was imported/);
    const full = dmrXml(records);
    const cutZip = join(app.dataDir, 'cut.zip');
    await writeZip(cutZip, [['ESStatistikListeModtag.xml', full.slice(0, full.indexOf('<ns:Statistik>', full.indexOf('CX31902')) + 60)]]);
    r = await run('import-dmr', cutZip);
    expect(r.err).toMatch(/cut\.zip:ESStatistikListeModtag\.xml: record 3: .*nothing was imported/);
    const damaged = write('damaged.zip', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(64)]));
    r = await run('import-dmr', damaged);
    expect(r.err).toMatch(/damaged\.zip: not a readable ZIP file/);
    r = await run('import-dmr', join(app.dataDir, 'missing.zip'));
    expect(r.err).toMatch(/no such file/);
    expect((await app.services.records.countByDataset()).CheckDenmark ?? 0).toBe(0);
  });

  it('draws progress with rows per second and an ETA on a terminal', async () => {
    const path = write('dmr.xml', dmrXml([dmrRecord(LIVE_FERRARI)]));
    const r = await cli(env, ['import-dmr', path], true);
    expect(r.code).toBe(0);
    expect(r.progress.some((line) => /^reading: 1 records, 100% \(\d+ rows\/s, ETA 0s\)$/.test(line))).toBe(true);
    expect(r.progress.some((line) => line.startsWith('writing: 1 records, 100%'))).toBe(true);
    expect(progressLine({ phase: 'reading', rows: 300_000, done: 25, total: 100 }, 0, 2000)).toBe('reading: 300000 records, 25% (150000 rows/s, ETA 6s)');
  });
});

describe.each(await enginesToTest())('staged register import on %s', (engine) => {
  it('writes the best record per plate, and an interrupted write is finished by a re-run', async () => {
    const { storage, cleanUp } = await freshStorage(engine, 'staged');
    const dir = tempDir();
    try {
      const records = new RecordRepository(storage.db);
      const { dataset, plateRule } = registerTarget(new Catalogue(), 'CheckDenmark');
      const path = join(dir.path, 'dmr.xml');
      writeFileSync(path, dmrXml([dmrRecord(LIVE_FERRARI), dmrRecord(OLD_BMW), ...['AA11111', 'BB22222', 'CC33333'].map((plate, i) => dmrRecord({ ...OLD_BMW, id: String(i), plate }))]));
      const read = (sink: Parameters<Parameters<StagedRegisterImporter['run']>[0]>[0]) => readDmrFile(path, plateRule, sink);
      // The "kill": the write transaction's work runs, then the process dies before COMMIT.
      const killed: typeof storage = { ...storage, transaction: (work) => storage.transaction(async (tx) => { await work(tx); throw new Error('killed'); }) };
      await expect(new StagedRegisterImporter(killed, records, systemClock, dataset).run(read, { source: 'dmr' })).rejects.toThrow('killed');
      expect((await records.countByDataset()).CheckDenmark ?? 0).toBe(0);
      expect(await new StagedRegisterImporter(storage, records, systemClock, dataset).run(read, { source: 'dmr' })).toMatchObject({ records: 4, written: 4 });
      expect(await new StagedRegisterImporter(storage, records, systemClock, dataset).run(read, { source: 'dmr' })).toMatchObject({ records: 4, written: 0, unchanged: 4 });
      expect(JSON.parse((await records.findDocument(dataset, 'ZU47209')) ?? '{}')).toMatchObject({ Description: 'FERRARI 348 TS' });
      const ukraine = registerTarget(new Catalogue(), 'CheckUkraine');
      const csv = join(dir.path, 'ua.csv');
      writeFileSync(csv, [UA_HEADER_2013, ua2013({ date: '2015-01-01', brand: 'KIA', model: 'RIO', year: '2011', plate: 'ВС0001АА' })].join('\n'));
      await new StagedRegisterImporter(storage, records, systemClock, ukraine.dataset).run((sink) => readUkraineFiles([csv], ukraine.plateRule, sink), { source: 'mvs' });
      expect(await records.findDocument(ukraine.dataset, 'BC0001AA')).toContain('KIA RIO');
    } finally {
      dir.remove();
      await cleanUp();
    }
  });
});
