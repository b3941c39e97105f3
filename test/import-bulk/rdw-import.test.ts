import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { cli, json, type CliRun } from '../cli/cli-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import {
  csvLine,
  fuelCsv,
  generatedFuel,
  generatedPlate,
  GOLF,
  GOLF_FUEL,
  NOTE,
  REGISTER_HEADER,
  registerCsv,
  registerLine,
  TESLA,
  TESLA_FUEL,
  writeGeneratedFuel,
  writeGeneratedRegister,
} from './rdw-fixtures.js';

interface RdwJson {
  rowsRead: number;
  imported: number;
  written: number;
  unchanged: number;
  invalid: number;
  withFuel: number;
  fuel?: { rowsRead: number; plates: number; invalid: number };
  committed: boolean;
  errors: Array<{ file: 'register' | 'fuel'; line: number; reason: string }>;
  errorsOmitted: number;
}

/** What the GOLF row of upstream-sources.md section 3 becomes, joined with its fuel row. */
const GOLF_DOCUMENT = {
  Description: 'VOLKSWAGEN GOLF',
  RegistrationYear: '2018',
  CarMake: { CurrentTextValue: 'VOLKSWAGEN' },
  CarModel: { CurrentTextValue: 'GOLF' },
  MakeDescription: 'VOLKSWAGEN',
  ModelDescription: 'GOLF',
  EngineSize: { CurrentTextValue: '1395' },
  FuelType: { CurrentTextValue: 'Benzine' },
  BodyStyle: { CurrentTextValue: 'hatchback' },
  NumberOfDoors: { CurrentTextValue: '5' },
  NumberOfSeats: { CurrentTextValue: 5 },
  Colour: 'GRIJS',
  RegistrationDate: '20180315',
  APKExpiryDate: '20260930',
  CataloguePrice: '28450',
  EuropeanVehicleCategory: 'M1',
  VehicleType: 'Personenauto',
};

let app: TestApp;
let apiKey: string;
let env: Record<string, string>;

beforeEach(async () => {
  app = await createTestApp();
  apiKey = await app.account('rdw', 1000);
  env = { DATA_DIR: app.dataDir, LOG_LEVEL: 'silent' };
});

afterEach(async () => {
  await app.close();
  process.exitCode = undefined;
});

function write(name: string, text: string): string {
  const path = join(app.dataDir, name);
  writeFileSync(path, text);
  return path;
}

async function importRdw(...args: string[]): Promise<RdwJson & { code: number }> {
  const run = await cli(env, ['import-rdw', ...args, '--json']);
  return { ...(json(run) as RdwJson), code: run.code };
}

/** The stored CheckNetherlands document of a normalised plate, parsed. */
async function stored(plate: string): Promise<unknown> {
  const doc = await app.services.records.findDocument('CheckNetherlands', plate);
  return doc === undefined ? undefined : JSON.parse(doc);
}

/** The JSON interface's answer for a plate, as a client sends it (HTTP Basic). */
function lookup(plate: string) {
  return app.app.inject({
    method: 'GET',
    url: `/api/json.aspx/CheckNetherlands/${encodeURIComponent(plate)}`,
    headers: { authorization: app.basic('rdw', apiKey) },
  });
}

async function netherlandsCount(): Promise<number> {
  return (await app.services.records.countByDataset()).CheckNetherlands ?? 0;
}

describe('mapping RDW rows', () => {
  it('keeps the later row of a plate the file gives twice, with other plates between them', async () => {
    // The reader hands rows over in key order per batch (rdw-row-source.ts): AB123C's rows meet
    // again after ZZ999Z's and AA000A's, and the later one (Passat) must still be the one kept.
    const rows = [GOLF, { ...GOLF, Kenteken: 'ZZ999Z' }, { ...GOLF, Kenteken: 'AA000A' }, { ...GOLF, Handelsbenaming: 'PASSAT' }];
    const summary = await importRdw(write('register.csv', registerCsv(rows)), '--fuel', write('fuel.csv', fuelCsv([GOLF_FUEL])));
    expect(summary).toMatchObject({ code: 0, committed: true, rowsRead: 4, imported: 4, invalid: 0 });
    expect(await stored('AB123C')).toMatchObject({ Description: 'VOLKSWAGEN PASSAT', CarModel: { CurrentTextValue: 'PASSAT' } });
    expect(await stored('ZZ999Z')).toMatchObject({ Description: 'VOLKSWAGEN GOLF' });
    expect(await netherlandsCount()).toBe(3);
  });

  it('maps the documented sample row, joined with its fuel, to the Netherlands vehicleJson', async () => {
    const summary = await importRdw(write('register.csv', registerCsv([GOLF])), '--fuel', write('fuel.csv', fuelCsv([GOLF_FUEL])));
    expect(summary).toMatchObject({ code: 0, committed: true, rowsRead: 1, imported: 1, written: 1, unchanged: 0, invalid: 0, withFuel: 1 });
    const doc = await app.services.records.findDocument('CheckNetherlands', 'AB123C');
    // Byte for byte, key order included: what JSON.stringify would write for the object.
    expect(doc).toBe(JSON.stringify(GOLF_DOCUMENT));
  });

  it("writes the members of the bundled sample's CheckNetherlands records, in their order, and VehicleType", () => {
    const sample = readFileSync(SAMPLE_DATASET_PATH, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"operation":"CheckNetherlands"'))
      .map((l) => (JSON.parse(l) as { vehicle: Record<string, unknown> }).vehicle);
    expect(sample.length).toBeGreaterThanOrEqual(2);
    for (const vehicle of sample) expect([...Object.keys(vehicle), 'VehicleType']).toEqual(Object.keys(GOLF_DOCUMENT));
    // And the value types of the sample: NumberOfSeats a number, the rest text.
    const first = sample[0] ?? {};
    for (const [key, value] of Object.entries(GOLF_DOCUMENT)) {
      if (key in first) expect(typeof value, key).toBe(typeof first[key]);
      if (typeof value === 'object' && key in first) expect(typeof value.CurrentTextValue, key).toBe(typeof (first[key] as { CurrentTextValue: unknown }).CurrentTextValue);
    }
  });

  it('drops a trade name that repeats the make from the model, and leaves out empty columns', async () => {
    await importRdw(write('register.csv', registerCsv([NOTE])));
    expect(await stored('12XYZ3')).toEqual({
      Description: 'NISSAN NOTE',
      RegistrationYear: '2009',
      CarMake: { CurrentTextValue: 'NISSAN' },
      CarModel: { CurrentTextValue: 'NOTE' },
      MakeDescription: 'NISSAN',
      ModelDescription: 'NOTE',
      EngineSize: { CurrentTextValue: '1386' },
      BodyStyle: { CurrentTextValue: 'MPV' },
      NumberOfDoors: { CurrentTextValue: '5' },
      NumberOfSeats: { CurrentTextValue: 5 },
      Colour: 'BLAUW',
      RegistrationDate: '20090201',
      APKExpiryDate: '20250201',
      EuropeanVehicleCategory: 'M1',
      VehicleType: 'Personenauto',
    });
  });

  it('reads a quoted trade name with a comma and an electric car without cylinder capacity', async () => {
    const summary = await importRdw(write('register.csv', registerCsv([TESLA])), '--fuel', write('fuel.csv', fuelCsv([TESLA_FUEL])));
    expect(summary).toMatchObject({ code: 0, imported: 1, withFuel: 1 });
    const doc = (await stored('T001EV')) as Record<string, unknown>;
    expect(doc).toMatchObject({ Description: 'TESLA MODEL 3, LONG RANGE', CarModel: { CurrentTextValue: 'MODEL 3, LONG RANGE' }, FuelType: { CurrentTextValue: 'Elektriciteit' }, Colour: 'WIT' });
    expect(doc).not.toHaveProperty('EngineSize');
  });

  it('treats "Niet geregistreerd" as no value', async () => {
    await importRdw(write('register.csv', registerCsv([{ ...GOLF, 'Eerste kleur': 'Niet geregistreerd', Inrichting: '' }])));
    const doc = (await stored('AB123C')) as Record<string, unknown>;
    expect(doc).not.toHaveProperty('Colour');
    expect(doc).not.toHaveProperty('BodyStyle');
  });

  it('finds the columns by name, in any order, and also by their API field names', async () => {
    const header = ['merk', 'kenteken', 'handelsbenaming', 'datum_eerste_toelating', 'extra kolom'];
    const summary = await importRdw(write('register.csv', `${csvLine(header)}\nKIA,k-318-rs,PICANTO,20210302,x\n`));
    expect(summary).toMatchObject({ code: 0, imported: 1 });
    expect(await stored('K318RS')).toEqual({
      Description: 'KIA PICANTO',
      RegistrationYear: '2021',
      CarMake: { CurrentTextValue: 'KIA' },
      CarModel: { CurrentTextValue: 'PICANTO' },
      MakeDescription: 'KIA',
      ModelDescription: 'PICANTO',
      RegistrationDate: '20210302',
    });
  });

  it('prints a one-line summary in text mode', async () => {
    const run = await cli(env, ['import-rdw', write('register.csv', registerCsv([GOLF, NOTE])), '--fuel', write('fuel.csv', fuelCsv([GOLF_FUEL]))]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toBe('Imported 2 CheckNetherlands records (2 new or changed, 0 unchanged, 1 with a fuel type).');
    expect(run.err).toBe('');
  });
});

describe('the fuel join', () => {
  it("joins each plate's primary fuel by Kenteken, whatever the order and spelling of the fuel rows", async () => {
    const register = write('register.csv', registerCsv([GOLF, NOTE, TESLA]));
    const fuel = write(
      'fuel.csv',
      fuelCsv([
        // A hybrid with its secondary fuel first: volgnummer 1 wins.
        { Kenteken: '12XYZ3', 'Brandstof volgnummer': '2', 'Brandstof omschrijving': 'Elektriciteit' },
        { Kenteken: '12-xyz-3', 'Brandstof volgnummer': '1', 'Brandstof omschrijving': 'Benzine' },
        // A plate the register does not have.
        { Kenteken: 'ZZ999Z', 'Brandstof volgnummer': '1', 'Brandstof omschrijving': 'Diesel' },
        GOLF_FUEL,
      ]),
    );
    const summary = await importRdw(register, '--fuel', fuel);
    expect(summary).toMatchObject({ code: 0, imported: 3, withFuel: 2, fuel: { rowsRead: 4, plates: 3, invalid: 0 } });
    expect(await stored('12XYZ3')).toMatchObject({ FuelType: { CurrentTextValue: 'Benzine' } });
    expect(await stored('AB123C')).toMatchObject({ FuelType: { CurrentTextValue: 'Benzine' } });
    // No fuel row: no FuelType member.
    expect(await stored('T001EV')).not.toHaveProperty('FuelType');
    expect(await stored('ZZ999Z')).toBeUndefined();
  });

  it('without --fuel writes no FuelType', async () => {
    await importRdw(write('register.csv', registerCsv([GOLF])));
    const { FuelType, ...rest } = GOLF_DOCUMENT;
    expect(FuelType).toBeDefined();
    expect(await stored('AB123C')).toEqual(rest);
  });

  it('reports invalid fuel rows with "fuel" and their line, and imports nothing without --skip-invalid', async () => {
    const fuel = write(
      'fuel.csv',
      [
        csvLine(['Kenteken', 'Brandstof volgnummer', 'Brandstof omschrijving']),
        'AB123C,1,Benzine',
        'AB!23C,1,Diesel',
        'T001EV,een,Elektriciteit',
        'T001EV,1,',
        'T001EV,1',
      ].join('\n'),
    );
    const run = await cli(env, ['import-rdw', write('register.csv', registerCsv([GOLF, TESLA])), '--fuel', fuel]);
    expect(run.code).toBe(1);
    expect(run.errLines).toEqual([
      'fuel line 3: Kenteken may contain only letters, digits, spaces and hyphens',
      'fuel line 4: Brandstof volgnummer "een" is not a whole number',
      'fuel line 5: Brandstof omschrijving is empty',
      'fuel line 6: has 2 fields, the header has 3',
      'Nothing imported: 4 invalid rows (fix them or use --skip-invalid).',
    ]);
    expect(await netherlandsCount()).toBe(0);

    const skipped = await importRdw(write('register.csv', registerCsv([GOLF, TESLA])), '--fuel', fuel, '--skip-invalid');
    expect(skipped).toMatchObject({ code: 0, imported: 2, withFuel: 1, invalid: 4, fuel: { rowsRead: 5, plates: 1, invalid: 4 } });
    expect(skipped.errors.map((e) => `${e.file}:${e.line}`)).toEqual(['fuel:3', 'fuel:4', 'fuel:5', 'fuel:6']);
  });

  it('refuses a fuel file without the fuel columns', async () => {
    const run = await cli(env, ['import-rdw', write('register.csv', registerCsv([GOLF])), '--fuel', write('fuel.csv', registerCsv([GOLF]))]);
    expect(run.code).toBe(1);
    expect(run.errLines).toEqual([
      `vehicle-lookup: ${join(app.dataDir, 'fuel.csv')}: line 1: the header has no "Brandstof volgnummer" column: is this the RDW "Gekentekende voertuigen brandstof" CSV export?`,
    ]);
  });
});

describe('re-running an import', () => {
  async function updatedAts(): Promise<string[]> {
    const rows = await app.services.storage.db.selectFrom('records').select(['lookup_key', 'updated_at']).where('dataset', '=', 'CheckNetherlands').orderBy('lookup_key').execute();
    return rows.map((r) => `${r.lookup_key} ${r.updated_at}`);
  }

  it('changes nothing the second time: same rows, same documents, nothing rewritten', async () => {
    const register = write('register.csv', registerCsv([GOLF, NOTE, TESLA]));
    const fuel = write('fuel.csv', fuelCsv([GOLF_FUEL, TESLA_FUEL]));
    const first = await importRdw(register, '--fuel', fuel);
    expect(first).toMatchObject({ code: 0, written: 3, unchanged: 0 });
    const documents = await Promise.all(['AB123C', '12XYZ3', 'T001EV'].map(stored));
    const times = await updatedAts();
    await new Promise((resolve) => setTimeout(resolve, 5));

    const second = await importRdw(register, '--fuel', fuel);
    expect(second).toMatchObject({ code: 0, imported: 3, written: 0, unchanged: 3 });
    expect(await netherlandsCount()).toBe(3);
    expect(await Promise.all(['AB123C', '12XYZ3', 'T001EV'].map(stored))).toEqual(documents);
    // A rewrite would have stamped a new updated_at.
    expect(await updatedAts()).toEqual(times);
  });

  it('rewrites only the rows that changed', async () => {
    await importRdw(write('register.csv', registerCsv([GOLF, NOTE, TESLA])));
    const summary = await importRdw(write('register.csv', registerCsv([{ ...GOLF, 'Eerste kleur': 'ROOD' }, NOTE, TESLA])));
    expect(summary).toMatchObject({ code: 0, imported: 3, written: 1, unchanged: 2 });
    expect(await stored('AB123C')).toMatchObject({ Colour: 'ROOD' });
    expect(await netherlandsCount()).toBe(3);
  });

  it('keeps the last of several rows with one Kenteken', async () => {
    const summary = await importRdw(write('register.csv', registerCsv([GOLF, { ...GOLF, Kenteken: 'ab-123-c', 'Eerste kleur': 'ZWART' }])));
    // Both rows were written (inserted, then replaced); one record remains.
    expect(summary).toMatchObject({ code: 0, imported: 2, written: 2, unchanged: 0 });
    expect(await netherlandsCount()).toBe(1);
    expect(await stored('AB123C')).toMatchObject({ Colour: 'ZWART' });
  });
});

describe('bad rows', () => {
  /** Each row, what the reason must say (undefined: a good row), on line index + 2. */
  const ROWS: ReadonlyArray<readonly [string, RegExp | undefined]> = [
    [registerLine(GOLF), undefined],
    [registerLine({ ...GOLF, Kenteken: '' }), /^Kenteken must not be empty$/],
    [registerLine({ ...GOLF, Kenteken: 'AB/123' }), /^Kenteken may contain only letters, digits, spaces and hyphens$/],
    [registerLine({ ...GOLF, Kenteken: 'EMPTY1', Merk: ' ' }), /^Merk is empty$/],
    [registerLine({ ...GOLF, Kenteken: 'DATE01', 'Datum eerste toelating': '2018-03-15' }), /^Datum eerste toelating "2018-03-15" is not a date written YYYYMMDD$/],
    [registerLine({ ...GOLF, Kenteken: 'DATE02', 'Vervaldatum APK': '20261332' }), /^Vervaldatum APK "20261332" is not a date written YYYYMMDD$/],
    [registerLine({ ...GOLF, Kenteken: 'SEATS1', 'Aantal zitplaatsen': 'vijf' }), /^Aantal zitplaatsen "vijf" is not a whole number$/],
    [registerLine({ ...GOLF, Kenteken: 'CC0001', Cilinderinhoud: '1.4' }), /^Cilinderinhoud "1.4" is not a whole number$/],
    ['SHORT1,Personenauto,VOLKSWAGEN', new RegExp(`^has 3 fields, the header has ${REGISTER_HEADER.length}$`)],
    [registerLine({ ...GOLF, Kenteken: 'QUOTE1' }).replace('VOLKSWAGEN', '"VOLKS"WAGEN'), /^unexpected character after the closing quote of field 3$/],
    [registerLine(NOTE), undefined],
  ];
  const expected = ROWS.flatMap(([, reason], i) => (reason ? [{ line: i + 2, reason }] : []));
  const mixed = (): string => write('mixed.csv', [csvLine(REGISTER_HEADER), ...ROWS.map(([line]) => line)].join('\n') + '\n');

  it('reports every bad row with its line number and imports nothing', async () => {
    const run = await cli(env, ['import-rdw', mixed()]);
    expect(run.code).toBe(1);
    expect(run.out).toBe('');
    expect(run.errLines).toHaveLength(expected.length + 1);
    expected.forEach(({ line, reason }, i) => {
      const reported = run.errLines[i] ?? '';
      expect(reported.startsWith(`line ${line}: `), reported).toBe(true);
      expect(reported.slice(`line ${line}: `.length)).toMatch(reason);
    });
    expect(run.errLines.at(-1)).toBe(`Nothing imported: ${expected.length} invalid rows (fix them or use --skip-invalid).`);
    expect(await netherlandsCount()).toBe(0);
  });

  it('--skip-invalid imports the good rows and still reports the bad ones', async () => {
    const summary = await importRdw(mixed(), '--skip-invalid');
    expect(summary).toMatchObject({ code: 0, committed: true, rowsRead: ROWS.length, imported: 2, written: 2, invalid: expected.length, errorsOmitted: 0 });
    expect(summary.errors.map((e) => e.line)).toEqual(expected.map((e) => e.line));
    summary.errors.forEach((e, i) => {
      expect(e.file).toBe('register');
      expect(e.reason).toMatch(expected[i]?.reason ?? /^$/);
    });
    expect(await netherlandsCount()).toBe(2);
  });

  it('counts physical lines, so a row after a quoted line break is reported on its own line', async () => {
    const multiLine = registerLine({ ...TESLA, Handelsbenaming: 'MODEL 3\nLONG RANGE' });
    const file = write('multi.csv', [csvLine(REGISTER_HEADER), multiLine, registerLine({ ...GOLF, Merk: '' })].join('\n'));
    const summary = await importRdw(file, '--skip-invalid');
    expect(summary.errors).toEqual([{ file: 'register', line: 4, reason: 'Merk is empty' }]);
    expect(await stored('T001EV')).toMatchObject({ ModelDescription: 'MODEL 3\nLONG RANGE' });
  });

  it('reports an unclosed quote at the end of the file at the line it opens', async () => {
    const file = write('open.csv', `${csvLine(REGISTER_HEADER)}\n${registerLine(GOLF)}\n"T001EV,Personenauto\n`);
    const summary = await importRdw(file, '--skip-invalid');
    expect(summary.errors).toEqual([{ file: 'register', line: 3, reason: 'a quoted field is not closed before the end of the file' }]);
    expect(summary).toMatchObject({ imported: 1 });
  });

  it.each([
    ['a header without Merk', `Kenteken,Handelsbenaming\nAB123C,GOLF\n`, /line 1: the header has no "Merk" column: is this the RDW "Gekentekende voertuigen" CSV export\?$/],
    ['a column named twice', `Kenteken,Merk,merk\nAB123C,VW,VW\n`, /line 1: the header names the column "merk" twice$/],
    ['an empty file', '', /the file is empty: no header line$/],
  ])('refuses %s with one clear line and exit 1', async (_what, text, message) => {
    const run = await cli(env, ['import-rdw', write('bad.csv', text)]);
    expect(run.code).toBe(1);
    expect(run.errLines).toHaveLength(1);
    expect(run.errLines[0]).toMatch(message);
  });

  it('reports a missing file with exit 1 and one clear line', async () => {
    const missing = join(app.dataDir, 'missing.csv');
    const run = await cli(env, ['import-rdw', missing]);
    expect(run).toMatchObject({ code: 1, errLines: [`vehicle-lookup: cannot read ${missing}: no such file`] });
    const fuelMissing = await cli(env, ['import-rdw', write('register.csv', registerCsv([GOLF])), '--fuel', missing]);
    expect(fuelMissing).toMatchObject({ code: 1, errLines: [`vehicle-lookup: cannot read ${missing}: no such file`] });
  });

  it('--json lists at most 1000 errors and counts the rest', async () => {
    const bad = registerLine({ ...GOLF, Merk: '' });
    const file = write('many-bad.csv', [csvLine(REGISTER_HEADER), ...Array.from({ length: 1200 }, () => bad)].join('\n'));
    const summary = await importRdw(file);
    expect(summary).toMatchObject({ code: 1, committed: false, invalid: 1200, errorsOmitted: 200 });
    expect(summary.errors).toHaveLength(1000);
  });
});

describe('progress', () => {
  const ROWS = 25_000;
  async function drawn(args: string[], interactive: boolean): Promise<CliRun> {
    const run = await cli(env, ['import-rdw', ...args], interactive);
    expect(run.code, run.err).toBe(0);
    return run;
  }

  it('draws rows, percentage and rate of each phase on a terminal, then ends the line', { timeout: 120_000 }, async () => {
    const register = join(app.dataDir, 'many.csv');
    const fuel = join(app.dataDir, 'many-fuel.csv');
    writeGeneratedRegister(register, ROWS);
    writeGeneratedFuel(fuel, ROWS);
    const run = await drawn([register, '--fuel', fuel], true);
    const lines = run.progress.join('\n');
    expect(lines).toMatch(/^indexing fuel: 10000 rows, \d{1,3}% \(\d+ rows\/s\)$/m);
    expect(lines).toMatch(/^checking: 10000 rows, \d{1,3}% \(\d+ rows\/s\)$/m);
    expect(lines).toMatch(/^checking: 25000 rows, 100% \(\d+ rows\/s\)$/m);
    expect(lines).toMatch(/^importing: 20000 rows, \d{1,3}% \(\d+ rows\/s\)$/m);
    expect(lines).toMatch(/^importing: 25000 rows, 100% \(\d+ rows\/s\)$/m);
    // The phases in order, and the percentage never going back within one.
    const phases = run.progress.map((l) => l.split(':')[0]);
    expect([...new Set(phases)]).toEqual(['indexing fuel', 'checking', 'importing']);
    expect(run.errLines).toContain('');
    expect(await stored(generatedPlate(ROWS - 1))).toMatchObject({ FuelType: { CurrentTextValue: generatedFuel(ROWS - 1) } });
  });

  it('draws nothing when the output is not a terminal or --json is given', async () => {
    const file = write('few.csv', registerCsv([GOLF, NOTE]));
    expect((await drawn([file], false)).progress).toEqual([]);
    expect((await drawn([file, '--json'], true)).progress).toEqual([]);
  });
});

describe('end to end: lookups after import-rdw', () => {
  it('answers CheckNetherlands with the mapped document for the plate written any way', async () => {
    // Before the import the plate is unknown.
    expect((await lookup('AB-123-C')).statusCode).toBe(500);
    const run = await cli(env, ['import-rdw', write('register.csv', registerCsv([GOLF, TESLA])), '--fuel', write('fuel.csv', fuelCsv([GOLF_FUEL, TESLA_FUEL]))]);
    expect(run.code, run.err).toBe(0);
    for (const plate of ['AB123C', 'ab-123-c', 'AB-123-C', 'ab 123 c', 'Ab123c']) {
      const response = await lookup(plate);
      expect(response.statusCode, `${plate}: ${response.body}`).toBe(200);
      const { ImageUrl, ...document } = JSON.parse(response.body) as Record<string, unknown>;
      expect(document, plate).toEqual(GOLF_DOCUMENT);
      expect(ImageUrl).toEqual(expect.stringContaining(`/image.aspx/@${Buffer.from('VOLKSWAGEN GOLF', 'utf8').toString('base64')}`));
    }
    expect(JSON.parse((await lookup('t001ev')).body)).toMatchObject({ Description: 'TESLA MODEL 3, LONG RANGE' });
    expect((await lookup('XX999X')).statusCode).toBe(500);
  });

  it('adds to the bundled sample dataset without disturbing it', async () => {
    const sample = await app.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    expect(sample.committed).toBe(true);
    const before = await app.services.records.countByDataset();
    const sampleNl = await lookup('ZT-482-K');
    expect(sampleNl.statusCode).toBe(200);
    const run = await cli(env, ['import-rdw', write('register.csv', registerCsv([GOLF]))]);
    expect(run.code, run.err).toBe(0);
    expect(await app.services.records.countByDataset()).toEqual({ ...before, CheckNetherlands: (before.CheckNetherlands ?? 0) + 1 });
    expect((await lookup('ZT482K')).body).toBe(sampleNl.body);
  });
});
