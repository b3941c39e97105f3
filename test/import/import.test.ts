import { closeSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { MINIMAL_FIELDS } from '../../src/catalogue/operations.js';
import { withServices } from '../../src/cli/cli-context.js';
import { cli, json, openStore, type Store } from '../cli/cli-harness.js';

interface ImportJson {
  linesRead: number;
  imported: number;
  invalid: number;
  byOperation: Record<string, number>;
  committed: boolean;
  errors: Array<{ line: number; reason: string }>;
}

const FRANCE = {
  operation: 'CheckFrance',
  key: { RegistrationNumber: 'EG258MA' },
  vehicle: {
    Description: 'Peugeot 208 Allure – électrique',
    RegistrationYear: '2021',
    CarMake: { CurrentTextValue: 'PEUGEOT' },
    CarModel: { CurrentTextValue: '208' },
    // Odd values the service must pass through untouched.
    NumberOfSeats: { CurrentTextValue: 5 },
    Emissions: [{ Standard: 'Euro 6d', Co2: 0 }, null, true],
    Empty: '',
    Nothing: null,
    Ratio: 0.25,
  },
};
const USA = {
  operation: 'CheckUSA',
  key: { RegistrationNumber: 'H84JAE', State: 'NJ' },
  vehicle: {
    Description: 'Honda Accord EX',
    RegistrationYear: '2004',
    CarMake: { CurrentTextValue: 'Honda' },
    CarModel: { CurrentTextValue: 'Accord' },
    MakeDescription: 'Honda',
    ModelDescription: 'Accord',
    EngineSize: { CurrentTextValue: '2.4L L4' },
    VechileIdentificationNumber: '1HGCM56404A012345',
    BodyStyle: { CurrentTextValue: 'Sedan' },
  },
};
/** Imported under the restricted variant's name and parameter names; CheckUSA serves it. */
const USA_MINIMAL = {
  operation: 'CheckUSAMinimal',
  key: { regNumber: 'min 42', state: 'ca' },
  vehicle: { Description: 'Tesla Model 3', RegistrationYear: '2022', CarMake: { CurrentTextValue: 'Tesla' }, CarModel: { CurrentTextValue: 'Model 3' }, Colour: 'Red' },
};
/** The KBA number without its slash: stored under the slashed form. */
const GERMANY = {
  operation: 'CheckGermany',
  key: { KBANumber: '0005alq' },
  vehicle: { Description: 'BMW 320d', MakeDescription: 'BMW', ModelDescription: '320d', KType: '12345' },
};
const AUSTRALIA_EXTENSIVE = {
  operation: 'CheckAustraliaExtensive',
  key: { RegistrationNumber: 'ABC123', State: 'nsw' },
  vehicle: { Description: 'Holden Commodore', CarMake: { CurrentTextValue: 'Holden' }, CarModel: { CurrentTextValue: 'Commodore' }, Extended: { Odometer: '120000' } },
};
const AUSTRIA = { operation: 'CheckAustria', key: { NatCode: 123456 }, vehicle: { Description: 'VW Golf', MakeDescription: 'VW' } };
const SPAIN_WITH_IMAGE = {
  operation: 'CheckSpain',
  key: { RegistrationNumber: '1234BCD' },
  vehicle: { Description: 'Seat Ibiza', CarMake: { CurrentTextValue: 'SEAT' }, ImageUrl: 'https://images.example.com/seat ibiza.jpg?v=1' },
};
/** No make anywhere: there is nothing to build an ImageUrl from. */
const NORWAY_NO_MAKE = { operation: 'CheckNorway', key: { RegistrationNumber: 'EL12345' }, vehicle: { Description: 'Unknown', Colour: 'White' } };
const MOT = {
  operation: 'UKMOT',
  key: { RegistrationNumber: 'BL64JTZ' },
  mot: {
    Tests: [
      { TestDate: '2025.10.01 10:00:00', ExpiryDate: '2026.10.01', Result: 'Pass', Odometer: '61000', TestNumber: '111122223333', FailureReasons: [], Advisories: ['Tyre worn close to legal limit'] },
      { TestDate: '2025.09.30 09:00:00', Result: 'Fail', Odometer: '60990', TestNumber: '111122223332', FailureReasons: ['Headlamp aim too high'], Advisories: [] },
    ],
    taxDate: '2026-04-01',
    ExtendedInformation: { Colour: 'Blue', FuelType: 'Petrol' },
  },
};
const NCAP = {
  operation: 'CheckEuroNCap',
  ncap: {
    Id: 4242,
    Title: 'Volvo XC60',
    Make: 'Volvo',
    Model: 'XC60',
    AdultOccupantStars: 5,
    ChildOccupantStars: 4,
    PedestrianStars: 4,
    AdultOccupantStrikeThrough: false,
    IsPublished: true,
    Year: 2017,
    ReleaseDate: '2017-05-31T00:00:00',
    Url: 'https://www.euroncap.com/en/results/volvo/xc60/29247',
  },
};

const GOOD = [FRANCE, USA, USA_MINIMAL, GERMANY, AUSTRALIA_EXTENSIVE, AUSTRIA, SPAIN_WITH_IMAGE, NORWAY_NO_MAKE, MOT, NCAP];

let store: Store;
let apiKey: string;

beforeEach(async () => {
  store = await openStore();
  ({ apiKey } = await store.built.services.accounts.create('importer', 1000));
});

afterEach(async () => {
  await store.close();
  // The import command reports failure through process.exitCode; keep one test's failure out of the next.
  process.exitCode = undefined;
});

const lookup = (path: string) => store.lookup(path, 'importer', apiKey);

async function importFile(file: string, ...flags: string[]): Promise<ImportJson & { code: number }> {
  const run = await cli(store.env, ['import', file, '--json', ...flags]);
  return { ...(json(run) as ImportJson), code: run.code };
}

async function counts(): Promise<Record<string, number>> {
  return { ...(await store.built.services.records.countByDataset()) };
}

/** The served body as text, for byte-for-byte comparisons (key order included). */
async function served(path: string): Promise<string> {
  const response = await lookup(path);
  expect(response.statusCode, response.body).toBe(200);
  return response.body;
}

function imagePathOf(makeModel: string): string {
  return `/image.aspx/@${Buffer.from(makeModel, 'utf8').toString('base64')}`;
}

describe('a good file', () => {
  it('imports every dataset kind and reports the counts per operation', async () => {
    const summary = await importFile(store.writeJsonl('good.jsonl', GOOD));
    expect(summary).toEqual({
      code: 0,
      linesRead: GOOD.length,
      imported: GOOD.length,
      invalid: 0,
      committed: true,
      errors: [],
      byOperation: {
        CheckFrance: 1,
        CheckUSA: 1,
        CheckUSAMinimal: 1,
        CheckGermany: 1,
        CheckAustraliaExtensive: 1,
        CheckAustria: 1,
        CheckSpain: 1,
        CheckNorway: 1,
        UKMOT: 1,
        CheckEuroNCap: 1,
      },
    });
    // Variants share their base operation's dataset: CheckUSAMinimal and CheckUSA rows are one set.
    expect(await counts()).toEqual({
      CheckFrance: 1,
      CheckUSA: 2,
      CheckGermany: 1,
      CheckAustralia: 1,
      CheckAustria: 1,
      CheckSpain: 1,
      CheckNorway: 1,
      UKMOT: 1,
      CheckEuroNCap: 1,
    });
  });

  it('prints a one-line summary in text mode', async () => {
    const run = await cli(store.env, ['import', store.writeJsonl('good.jsonl', [FRANCE, USA, MOT])]);
    expect(run.code).toBe(0);
    expect(run.out).toBe('Imported 3 records (CheckFrance 1, CheckUSA 1, UKMOT 1).');
    expect(run.err).toBe('');
  });

  it('serves the vehicle object exactly as imported, with only an ImageUrl added', async () => {
    await importFile(store.writeJsonl('good.jsonl', GOOD));
    const body = await served('CheckFrance/EG258MA');
    const imageUrl = (JSON.parse(body) as { ImageUrl?: unknown }).ImageUrl;
    expect(imageUrl).toEqual(expect.stringMatching(/^https?:\/\/[^/]+\/image\.aspx\/@/));
    expect(String(imageUrl).endsWith(imagePathOf('PEUGEOT 208'))).toBe(true);
    expect(body).toBe(JSON.stringify({ ...FRANCE.vehicle, ImageUrl: imageUrl }));
  });

  it('keeps an ImageUrl present in the record as is', async () => {
    await importFile(store.writeJsonl('good.jsonl', GOOD));
    expect(await served('CheckSpain/1234BCD')).toBe(JSON.stringify(SPAIN_WITH_IMAGE.vehicle));
  });

  it('adds no ImageUrl when the record names no make', async () => {
    await importFile(store.writeJsonl('good.jsonl', GOOD));
    expect(await served('CheckNorway/EL12345')).toBe(JSON.stringify(NORWAY_NO_MAKE.vehicle));
  });

  it('serves a CheckUSAMinimal record from CheckUSA whole, with its key normalised', async () => {
    await importFile(store.writeJsonl('good.jsonl', GOOD));
    const body = JSON.parse(await served('CheckUSA/MIN42/CA')) as Record<string, unknown>;
    const { ImageUrl, ...rest } = body;
    expect(rest).toEqual(USA_MINIMAL.vehicle);
    expect(ImageUrl).toEqual(expect.stringContaining(imagePathOf('Tesla Model 3')));
  });

  it('serves a CheckUSA record from CheckUSAMinimal restricted to the minimal fields and ImageUrl', async () => {
    await importFile(store.writeJsonl('good.jsonl', GOOD));
    const body = JSON.parse(await served('CheckUSAMinimal/h84jae/nj')) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([...MINIMAL_FIELDS, 'ImageUrl'].sort());
    for (const field of MINIMAL_FIELDS) expect(body[field]).toEqual(USA.vehicle[field]);
    // And the full record from the base operation.
    const full = JSON.parse(await served('CheckUSA/H84JAE/NJ')) as Record<string, unknown>;
    expect(full).toEqual({ ...USA.vehicle, ImageUrl: body.ImageUrl });
  });

  it('serves a CheckAustraliaExtensive record from CheckAustralia', async () => {
    await importFile(store.writeJsonl('good.jsonl', GOOD));
    const body = JSON.parse(await served('CheckAustralia/ABC123/NSW')) as Record<string, unknown>;
    expect(body).toMatchObject(AUSTRALIA_EXTENSIVE.vehicle);
  });

  it('stores a KBA number given without its slash under the slashed form', async () => {
    await importFile(store.writeJsonl('good.jsonl', GOOD));
    const stored = await store.built.services.records.findDocument('CheckGermany', '0005/ALQ');
    expect(stored === undefined ? undefined : JSON.parse(stored)).toEqual(GERMANY.vehicle);
    expect(JSON.parse(await served('CheckGermany/0005/ALQ'))).toMatchObject(GERMANY.vehicle);
    expect(JSON.parse(await served('CheckGermany/0005ALQ'))).toMatchObject(GERMANY.vehicle);
  });

  it('accepts a numeric key value for an integer parameter', async () => {
    await importFile(store.writeJsonl('good.jsonl', GOOD));
    expect(JSON.parse(await served('CheckAustria/123456'))).toMatchObject(AUSTRIA.vehicle);
  });

  it('serves the MOT history exactly as imported', async () => {
    await importFile(store.writeJsonl('good.jsonl', GOOD));
    expect(await served('UKMOT/BL64JTZ')).toBe(JSON.stringify(MOT.mot));
  });

  it('serves the Euro NCAP rating exactly as imported', async () => {
    await importFile(store.writeJsonl('good.jsonl', GOOD));
    expect(await served('CheckEuroNCap/volvo/xc')).toBe(JSON.stringify([NCAP.ncap]));
  });

  it('reads CRLF line endings and skips blank lines', async () => {
    const file = join(store.dir, 'crlf.jsonl');
    writeFileSync(file, `${JSON.stringify(FRANCE)}\r\n\r\n   \r\n${JSON.stringify(MOT)}\r\n`);
    const summary = await importFile(file);
    expect(summary).toMatchObject({ code: 0, imported: 2, invalid: 0, linesRead: 4 });
    expect(JSON.parse(await served('UKMOT/BL64JTZ'))).toEqual(MOT.mot);
  });

  it('reports a missing file with exit 1 and one clear line', async () => {
    const run = await cli(store.env, ['import', join(store.dir, 'missing.jsonl')]);
    expect(run.code).toBe(1);
    expect(run.errLines).toEqual([`vehicle-lookup: cannot read ${join(store.dir, 'missing.jsonl')}: no such file`]);
  });
});

describe('invalid lines', () => {
  /** Each bad line with the line number it lands on and what the reason must say. */
  const LINES: ReadonlyArray<readonly [unknown, RegExp | undefined]> = [
    [FRANCE, undefined],
    ['{"operation":"CheckFrance","key":', /^not valid JSON/],
    [{ operation: 'CheckAtlantis', key: { RegistrationNumber: 'AB12' }, vehicle: {} }, /unknown operation "CheckAtlantis"/],
    ['', undefined],
    [{ operation: 'CheckUSA', key: { RegistrationNumber: 'AB12' }, vehicle: {} }, /key\.State is required/],
    [{ operation: 'CheckUSA', key: { RegistrationNumber: 'AB12', State: 'ZZ' }, vehicle: {} }, /key\.State must be one of/],
    [{ ...FRANCE, key: { RegistrationNumber: 'AB13' }, comment: 'extra' }, /unexpected field "comment"/],
    [{ operation: 'CheckFrance', key: { RegistrationNumber: 'AB14' }, mot: MOT.mot }, /unexpected field "mot"/],
    [{ operation: 'CheckEuroNCap', ncap: { ...NCAP.ncap, Id: 1, AdultOccupantStars: '5' } }, /ncap\.AdultOccupantStars must be a whole number/],
    [{ operation: 'UKMOT', key: { RegistrationNumber: 'AB15' }, mot: { Tests: { TestDate: '2025.01.01' } } }, /mot\.Tests must be an array/],
    [{ operation: 'CheckFrance', key: { Registration: 'AB16' }, vehicle: {} }, /key field "Registration" is not part of the CheckFrance key/],
    [USA, undefined],
  ];
  const expectedErrors = LINES.flatMap(([, reason], i) => (reason ? [{ line: i + 1, reason }] : []));

  const writeMixed = (): string => store.writeJsonl('mixed.jsonl', LINES.map(([line]) => line));

  it('reports every bad line with its number and reason and imports nothing', async () => {
    const run = await cli(store.env, ['import', writeMixed()]);
    expect(run.code).toBe(1);
    expect(run.out).toBe('');
    expect(run.errLines).toHaveLength(expectedErrors.length + 1);
    expectedErrors.forEach(({ line, reason }, i) => {
      const reported = run.errLines[i] ?? '';
      expect(reported.startsWith(`line ${line}: `), reported).toBe(true);
      expect(reported.slice(`line ${line}: `.length)).toMatch(reason);
    });
    expect(run.errLines.at(-1)).toBe(`Nothing imported: ${expectedErrors.length} invalid lines (fix them or use --skip-invalid).`);

    expect(await counts()).toEqual({});
    // The good lines of the file are not served either.
    expect((await lookup('CheckFrance/EG258MA')).statusCode).toBe(500);
    expect((await lookup('CheckUSA/H84JAE/NJ')).body).toBe('USA Lookup failed');
  });

  it('--json lists the errors by line and says nothing was committed', async () => {
    const summary = await importFile(writeMixed());
    expect(summary.code).toBe(1);
    expect(summary).toMatchObject({ committed: false, imported: 0, invalid: expectedErrors.length, linesRead: LINES.length });
    expect(summary.errors.map((e) => e.line)).toEqual(expectedErrors.map((e) => e.line));
    summary.errors.forEach((e, i) => {
      expect(e.reason).toMatch(expectedErrors[i]?.reason ?? /^$/);
    });
    expect(await counts()).toEqual({});
  });

  it('--skip-invalid imports the good lines and still reports the bad ones', async () => {
    const run = await cli(store.env, ['import', writeMixed(), '--skip-invalid']);
    expect(run.code).toBe(0);
    expect(run.errLines.map((l) => /^line (\d+):/.exec(l)?.[1])).toEqual(expectedErrors.map((e) => String(e.line)));
    expect(run.out).toBe(`Imported 2 records, skipped ${expectedErrors.length} invalid lines (CheckFrance 1, CheckUSA 1).`);
    expect(await counts()).toEqual({ CheckFrance: 1, CheckUSA: 1 });
    expect(JSON.parse(await served('CheckUSA/H84JAE/NJ'))).toMatchObject(USA.vehicle);
  });

  it('--skip-invalid --json reports the errors and the committed summary', async () => {
    const summary = await importFile(writeMixed(), '--skip-invalid');
    expect(summary).toMatchObject({ code: 0, committed: true, imported: 2, invalid: expectedErrors.length, byOperation: { CheckFrance: 1, CheckUSA: 1 } });
    expect(summary.errors.map((e) => e.line)).toEqual(expectedErrors.map((e) => e.line));
  });

  it.each([
    ['a JSON array', [1, 2], /must be a JSON object/],
    ['a missing operation', { key: { RegistrationNumber: 'AB12' }, vehicle: {} }, /"operation" must be a string/],
    ['a vehicle that is not an object', { operation: 'CheckFrance', key: { RegistrationNumber: 'AB12' }, vehicle: 'Peugeot' }, /"vehicle" must be a JSON object/],
    ['a key on a Euro NCAP record', { ...NCAP, key: { Make: 'Volvo' } }, /unexpected field "key"/],
    ['an NCAP rating without a model', { operation: 'CheckEuroNCap', ncap: { Make: 'Volvo' } }, /ncap\.Model is required/],
    ['an NCAP date that is not ISO 8601', { operation: 'CheckEuroNCap', ncap: { Make: 'Volvo', Model: 'XC60', ReleaseDate: '31/05/2017' } }, /ncap\.ReleaseDate must be an ISO 8601/],
    ['an MOT test whose advisories are not strings', { ...MOT, mot: { Tests: [{ Advisories: [1] }] } }, /mot\.Tests\[0\]\.Advisories must be an array of strings/],
    ['a registration with punctuation', { operation: 'CheckFrance', key: { RegistrationNumber: 'AB!12' }, vehicle: {} }, /key\.RegistrationNumber may contain only/],
    ['CheckUSAMinimal keyed with CheckUSA parameter names', { ...USA_MINIMAL, key: { RegistrationNumber: 'AB12', State: 'CA' } }, /not part of the CheckUSAMinimal key/],
  ])('rejects %s', async (_what, line, reason) => {
    const summary = await importFile(store.writeJsonl('one.jsonl', [FRANCE, line]));
    expect(summary.code).toBe(1);
    expect(summary.errors).toEqual([{ line: 2, reason: expect.stringMatching(reason) as unknown }]);
    expect(await counts()).toEqual({});
  });
});

describe('re-importing', () => {
  it('replaces the document of a key and leaves the count unchanged', async () => {
    await importFile(store.writeJsonl('first.jsonl', [FRANCE, USA, MOT, NCAP]));
    const before = await counts();
    // Served once first, so the cached records and their encoded answers exist and must be dropped.
    expect(JSON.parse(await served('CheckFrance/EG258MA'))).toMatchObject(FRANCE.vehicle);
    expect(JSON.parse(await served('UKMOT/BL64JTZ'))).toMatchObject({ Tests: MOT.mot.Tests });

    const france2 = { ...FRANCE, key: { RegistrationNumber: 'eg-258 ma' }, vehicle: { Description: 'Peugeot 208 GT', RegistrationYear: '2022' } };
    const mot2 = { ...MOT, mot: { Tests: [] } };
    const ncap2 = { ...NCAP, ncap: { ...NCAP.ncap, AdultOccupantStars: 4 } };
    const summary = await importFile(store.writeJsonl('second.jsonl', [france2, mot2, ncap2]));
    expect(summary).toMatchObject({ code: 0, imported: 3 });

    expect(await counts()).toEqual(before);
    expect(await served('CheckFrance/EG258MA')).toBe(JSON.stringify(france2.vehicle));
    expect(JSON.parse(await served('UKMOT/BL64JTZ'))).toEqual({ Tests: [], ExtendedInformation: {} });
    expect(await served('CheckEuroNCap/Volvo/XC60')).toBe(JSON.stringify([ncap2.ncap]));
    // Untouched keys keep their document.
    expect(JSON.parse(await served('CheckUSA/H84JAE/NJ'))).toMatchObject(USA.vehicle);
  });

  it('replaces a record through a variant that shares the dataset', async () => {
    await importFile(store.writeJsonl('first.jsonl', [USA]));
    const replacement = { operation: 'CheckUSAMinimal', key: { regNumber: 'h84 jae', state: 'nj' }, vehicle: { Description: 'Replaced' } };
    await importFile(store.writeJsonl('second.jsonl', [replacement]));
    expect(await counts()).toEqual({ CheckUSA: 1 });
    expect(await served('CheckUSA/H84JAE/NJ')).toBe(JSON.stringify(replacement.vehicle));
  });

  it('keeps the last of several lines with one key in one file', async () => {
    const lines = [1, 2, 3].map((n) => ({ ...FRANCE, vehicle: { Description: `version ${n}` } }));
    const summary = await importFile(store.writeJsonl('dupes.jsonl', lines));
    expect(summary).toMatchObject({ code: 0, imported: 3 });
    expect(await counts()).toEqual({ CheckFrance: 1 });
    expect(await served('CheckFrance/EG258MA')).toBe(JSON.stringify({ Description: 'version 3' }));
  });
});

describe('the sample dataset', () => {
  it('imports with no invalid line', async () => {
    const lines = readFileSync(SAMPLE_DATASET_PATH, 'utf8').split('\n').filter((l) => l.trim() !== '');
    const summary = await importFile(SAMPLE_DATASET_PATH);
    expect(summary.errors).toEqual([]);
    expect(summary).toMatchObject({ code: 0, invalid: 0, committed: true, imported: lines.length });
  });

  it('has at least two records for every operation of the catalogue', () => {
    const perOperation = new Map<string, number>();
    for (const line of readFileSync(SAMPLE_DATASET_PATH, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const { operation } = JSON.parse(line) as { operation: string };
      perOperation.set(operation, (perOperation.get(operation) ?? 0) + 1);
    }
    const operations = new Catalogue().operations.map((op) => op.name);
    expect(operations.length).toBeGreaterThan(40);
    const short = operations.filter((name) => (perOperation.get(name) ?? 0) < 2).map((name) => `${name}: ${perOperation.get(name) ?? 0}`);
    expect(short).toEqual([]);
  });
});

describe('progress', () => {
  const writeMany = (count: number): string =>
    store.writeJsonl(
      'many.jsonl',
      Array.from({ length: count }, (_, i) => ({ operation: 'CheckFrance', key: { RegistrationNumber: `P${i}` }, vehicle: { Description: `car ${i}` } })),
    );

  /** Runs an import; returns the progress lines it drew and whether it ended the line. */
  async function drawn(args: string[], interactive: boolean): Promise<{ lines: string; endedLine: boolean }> {
    const run = await cli(store.env, ['import', ...args], interactive);
    expect(run.code, run.err).toBe(0);
    return { lines: run.progress.join('\n'), endedLine: run.progress.length > 0 && run.errLines.includes('') };
  }

  it('draws the lines read while checking and importing on a terminal', async () => {
    const output = await drawn([writeMany(25_000)], true);
    expect(output.lines).toMatch(/^checking: 10000 lines/m);
    expect(output.lines).toMatch(/^checking: 25000 lines/m);
    expect(output.lines).toMatch(/^importing: 20000 lines/m);
    expect(output.endedLine).toBe(true);
  });

  it('draws nothing when the output is not a terminal or --json is given', async () => {
    const file = writeMany(12_000);
    expect((await drawn([file], false)).lines).toBe('');
    expect((await drawn([file, '--json'], true)).lines).toBe('');
  });
});

describe('a large file', () => {
  it('streams 200,000 lines with heap growth far below the file size', { timeout: 120_000 }, async () => {
    const LINES = 200_000;
    const BOUND = 150 * 1024 * 1024;
    // Each line carries ~750 bytes of filler so the file is larger than the bound: an importer that
    // held the whole file (or all its records) in memory could not stay under it.
    const filler = 'x'.repeat(750);
    const file = join(store.dir, 'large.jsonl');
    const fd = openSync(file, 'w');
    try {
      for (let start = 0; start < LINES; start += 1000) {
        let chunk = '';
        for (let i = start; i < start + 1000; i += 1) {
          chunk += `{"operation":"CheckFrance","key":{"RegistrationNumber":"L${i}"},"vehicle":{"Description":"Generated ${i}","Notes":"${filler}"}}\n`;
        }
        writeSync(fd, chunk);
      }
    } finally {
      closeSync(fd);
    }
    expect(statSync(file).size).toBeGreaterThan(BOUND);

    // A forced collection gives a baseline free of earlier tests' garbage.
    setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    const sample = (): void => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    };

    const summary = await withServices(store.env, (services) =>
      services.importer.importFile(file, { skipInvalid: false, source: 'large', onProgress: sample }),
    );
    sample();

    expect(summary).toMatchObject({ committed: true, imported: LINES, invalid: 0, linesRead: LINES });
    expect(await counts()).toEqual({ CheckFrance: LINES });
    expect(JSON.parse(await served(`CheckFrance/L${LINES - 1}`))).toMatchObject({ Description: `Generated ${LINES - 1}` });
    expect(peak - baseline).toBeLessThan(BOUND);
  });
});
