import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, json } from '../cli/cli-harness.js';
import { sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { csvLine } from './rdw-fixtures.js';

interface NcapJson {
  format: 'json' | 'csv';
  read: number;
  imported: number;
  invalid: number;
  committed: boolean;
  errors: Array<{ line: number; item?: number; reason: string }>;
  errorsOmitted: number;
}

const XC60 = {
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
  SortOrder: 2,
  ReleaseDate: '2017-05-31T00:00:00',
  Url: 'https://ncap-licensed.example/volvo/xc60',
};
const XC90 = { ...XC60, Id: 4243, Title: 'Volvo XC90', Model: 'XC90', Year: 2015, SortOrder: 1, ReleaseDate: '2015-02-01T00:00:00' };
const GOLF = { Id: 5001, Make: 'Volkswagen', Model: 'Golf', AdultOccupantStars: 5, Year: 2019 };

let app: TestApp;
let apiKey: string;
let env: Record<string, string>;

beforeEach(async () => {
  app = await createTestApp();
  apiKey = await app.account('ncap', 1000);
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

async function importNcap(...args: string[]): Promise<NcapJson & { code: number }> {
  const run = await cli(env, ['import-ncap', ...args, '--json']);
  return { ...(json(run) as NcapJson), code: run.code };
}

/** The CheckEuroNCap answer of the JSON interface, parsed. */
async function search(make: string, model?: string): Promise<unknown[]> {
  const path = model === undefined ? make : `${make}/${model}`;
  const response = await app.app.inject({ method: 'GET', url: `/api/json.aspx/CheckEuroNCap/${path}`, headers: { authorization: app.basic('ncap', apiKey) } });
  expect(response.statusCode, response.body).toBe(200);
  return JSON.parse(response.body) as unknown[];
}

async function ratingCount(): Promise<number> {
  return (await app.services.records.countByDataset()).CheckEuroNCap ?? 0;
}

describe('a JSON array of PreAssessmentSearchResult objects', () => {
  it('imports every rating and serves them with the usual search: make equal, model contained, any case', async () => {
    const summary = await importNcap(write('ratings.json', JSON.stringify([XC60, XC90, GOLF], null, 2)));
    expect(summary).toMatchObject({ code: 0, format: 'json', read: 3, imported: 3, invalid: 0, committed: true, errors: [] });
    // Ordered by SortOrder: XC90 (1) before XC60 (2).
    expect(await search('volvo', 'xc')).toEqual([XC90, XC60]);
    expect(await search('VOLVO', 'C6')).toEqual([XC60]);
    expect(await search('Volvo')).toEqual([XC90, XC60]);
    // The make must be equal, not contained.
    expect(await search('Volv', 'XC60')).toEqual([]);
    expect(await search('volkswagen', 'golf')).toEqual([GOLF]);
  });

  it('prints a one-line summary in text mode', async () => {
    const run = await cli(env, ['import-ncap', write('ratings.json', JSON.stringify([XC60, GOLF]))]);
    expect(run).toMatchObject({ code: 0, out: 'Imported 2 Euro NCAP ratings from JSON.', err: '' });
  });

  it('takes the sample dataset ratings, as an array, exactly as the JSON Lines import stores them', async () => {
    const ratings = sampleLines()
      .filter((l) => l.operation === 'CheckEuroNCap')
      .map((l) => l.ncap);
    expect(ratings.length).toBeGreaterThanOrEqual(2);
    const summary = await importNcap(write('sample.json', JSON.stringify(ratings)));
    expect(summary).toMatchObject({ code: 0, imported: ratings.length });
    const rows = await app.services.storage.db.selectFrom('ncap_ratings').select('document').execute();
    expect(rows.map((r) => JSON.parse(r.document) as unknown)).toEqual(expect.arrayContaining(ratings));
  });

  it('reports each invalid item with its position and line, with the JSON Lines rules, and imports nothing', async () => {
    const text = [
      '[',
      `  ${JSON.stringify(XC60)},`,
      `  ${JSON.stringify({ ...XC90, AdultOccupantStars: 'five' })},`,
      '  {',
      '    "Make": "Volvo"',
      '  },',
      `  ${JSON.stringify({ ...GOLF, IsPublished: 'yes' })},`,
      `  ${JSON.stringify({ ...GOLF, Id: 5002, ReleaseDate: '31/05/2019' })},`,
      '  "not an object"',
      ']',
    ].join('\n');
    const run = await cli(env, ['import-ncap', write('bad.json', text)]);
    expect(run.code).toBe(1);
    expect(run.errLines).toEqual([
      'line 3 (item 2): ncap.AdultOccupantStars must be a whole number',
      'line 4 (item 3): ncap.Model is required and must be a non-empty string',
      'line 7 (item 4): ncap.IsPublished must be true or false',
      'line 8 (item 5): ncap.ReleaseDate must be an ISO 8601 date-time such as 2017-05-31T00:00:00',
      'line 9 (item 6): "ncap" must be a JSON object',
      'Nothing imported: 5 invalid ratings (fix them or use --skip-invalid).',
    ]);
    expect(await ratingCount()).toBe(0);

    const skipped = await importNcap(write('bad.json', text), '--skip-invalid');
    expect(skipped).toMatchObject({ code: 0, read: 6, imported: 1, invalid: 5 });
    expect(skipped.errors.map((e) => [e.line, e.item])).toEqual([[3, 2], [4, 3], [7, 4], [8, 5], [9, 6]]);
    expect(await search('volvo', 'xc60')).toEqual([XC60]);
  });

  it.each([
    ['not JSON', '[{"Make": "Volvo",', /is not valid JSON/],
    ['not an array', JSON.stringify({ PreAssessmentSearchResults: [XC60] }), /must hold a JSON array of PreAssessmentSearchResult objects$/],
  ])('refuses a file that is %s with one clear line and exit 1', async (_what, text, message) => {
    const run = await cli(env, ['import-ncap', write('ratings.json', text)]);
    expect(run.code).toBe(1);
    expect(run.errLines).toHaveLength(1);
    expect(run.errLines[0]).toMatch(message);
  });

  it('replaces a rating imported again under the same Id', async () => {
    await importNcap(write('first.json', JSON.stringify([XC60, XC90])));
    const renamed = { ...XC60, Model: 'XC60 Recharge', AdultOccupantStars: 4 };
    expect(await importNcap(write('second.json', JSON.stringify([renamed])))).toMatchObject({ code: 0, imported: 1 });
    expect(await ratingCount()).toBe(2);
    expect(await search('volvo', 'recharge')).toEqual([renamed]);
  });
});

describe('a CSV with PreAssessmentSearchResult column names', () => {
  const HEADER = ['Id', 'Make', 'Model', 'Title', 'AdultOccupantStars', 'ChildOccupantStars', 'IsPublished', 'IsFleet', 'AdultOccupantStrikeThrough', 'Year', 'ReleaseDate', 'FirstPublished', 'Content', 'YoukuVideos'];

  it('converts whole numbers, booleans and ISO dates, and keeps text as text', async () => {
    const file = write(
      'ratings.csv',
      [
        csvLine(HEADER),
        csvLine(['4242', 'Volvo', 'XC60', 'Volvo XC60', '5', '4', 'true', 'FALSE', '0', '2017', '2017-05-31', '2017-05-31T09:30:00', 'Safe, "very" safe\nsecond line', '']),
        // Empty cells: numbers, booleans and dates left out; text as the empty string.
        csvLine(['', 'Kia', 'Niro', '', '', '', '', '', '', '', '', '', '', '']),
      ].join('\r\n'),
    );
    const summary = await importNcap(file);
    expect(summary).toMatchObject({ code: 0, format: 'csv', read: 2, imported: 2, invalid: 0 });
    expect(await search('volvo', 'xc60')).toEqual([
      {
        Id: 4242,
        Make: 'Volvo',
        Model: 'XC60',
        Title: 'Volvo XC60',
        AdultOccupantStars: 5,
        ChildOccupantStars: 4,
        IsPublished: true,
        IsFleet: false,
        AdultOccupantStrikeThrough: false,
        Year: 2017,
        ReleaseDate: '2017-05-31T00:00:00',
        FirstPublished: '2017-05-31T09:30:00',
        Content: 'Safe, "very" safe\nsecond line',
        YoukuVideos: '',
      },
    ]);
    expect(await search('KIA', 'niro')).toEqual([{ Make: 'Kia', Model: 'Niro', Title: '', Content: '', YoukuVideos: '' }]);
  });

  it('accepts column names in any letter case', async () => {
    const summary = await importNcap(write('ratings.csv', `make,MODEL,year\nVolvo,XC40,2018\n`));
    expect(summary).toMatchObject({ code: 0, imported: 1 });
    expect(await search('volvo', 'xc40')).toEqual([{ Make: 'Volvo', Model: 'XC40', Year: 2018 }]);
  });

  it('reports cells that do not convert with the JSON Lines messages and their line numbers', async () => {
    const file = write(
      'bad.csv',
      [
        csvLine(HEADER),
        csvLine(['1', 'Volvo', 'XC60', '', '5', '', '', '', '', '20x7', '', '', '', '']),
        csvLine(['2', 'Volvo', 'XC90', '', '5', '', 'maybe', '', '', '', '', '', '', '']),
        csvLine(['3', 'Volvo', 'XC40', '', '', '', '', '', '', '', '31/05/2017', '', '', '']),
        csvLine(['4', 'Volvo', '', '', '', '', '', '', '', '', '', '', '', '']),
        csvLine(['5', 'Volvo', 'V60', '', '2.5', '', '', '', '', '', '', '', '', '']),
        'Volvo,V90',
        csvLine(['7', 'Volvo', 'V40', '', '5', '', '', '', '', '2012', '', '', '', '']),
      ].join('\n'),
    );
    const summary = await importNcap(file);
    expect(summary).toMatchObject({ code: 1, committed: false, read: 7, imported: 0, invalid: 6 });
    expect(summary.errors).toEqual([
      { line: 2, reason: 'ncap.Year must be a whole number' },
      { line: 3, reason: 'ncap.IsPublished must be true or false' },
      { line: 4, reason: 'ncap.ReleaseDate must be an ISO 8601 date-time such as 2017-05-31T00:00:00' },
      { line: 5, reason: 'ncap.Model is required and must be a non-empty string' },
      { line: 6, reason: 'ncap.AdultOccupantStars must be a whole number' },
      { line: 7, reason: `has 2 fields, the header has ${HEADER.length}` },
    ]);
    expect(await ratingCount()).toBe(0);
    expect(await importNcap(file, '--skip-invalid')).toMatchObject({ code: 0, imported: 1, invalid: 6 });
    expect(await search('volvo', 'v40')).toEqual([{ Id: 7, Make: 'Volvo', Model: 'V40', Title: '', AdultOccupantStars: 5, Year: 2012, Content: '', YoukuVideos: '' }]);
  });

  it.each([
    ['an unknown column', 'Make,Model,Stars\nVolvo,XC60,5\n', /line 1: unknown column "Stars" \(columns are PreAssessmentSearchResult field names: /],
    ['a column named twice', 'Make,Model,model\nVolvo,XC60,XC60\n', /line 1: the column "Model" appears twice$/],
    ['no Model column', 'Make,Year\nVolvo,2017\n', /line 1: the header has no "Model" column$/],
  ])('refuses a header with %s', async (_what, text, message) => {
    const run = await cli(env, ['import-ncap', write('ratings.csv', text)]);
    expect(run.code).toBe(1);
    expect(run.errLines).toHaveLength(1);
    expect(run.errLines[0]).toMatch(message);
  });

  it('reports a missing file with exit 1 and one clear line', async () => {
    const missing = join(app.dataDir, 'missing.csv');
    expect(await cli(env, ['import-ncap', missing])).toMatchObject({ code: 1, errLines: [`vehicle-lookup: cannot read ${missing}: no such file`] });
  });
});
