import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CsvFileError, CsvReader, isCsvProblem, MAX_RECORD_CHARS, type CsvRecord } from '../../src/datasets/import/csv-reader.js';
import { tempDir } from '../helpers/test-app.js';

let dir: { path: string; remove: () => void };
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => {
  dir.remove();
});

function file(text: string): string {
  const path = join(dir.path, 'file.csv');
  writeFileSync(path, text);
  return path;
}

async function read(text: string, columns?: readonly number[]): Promise<{ header: readonly string[]; records: CsvRecord[] }> {
  const reader = await CsvReader.open(file(text));
  const records: CsvRecord[] = [];
  for await (const batch of reader.rows(columns)) records.push(...batch);
  return { header: reader.header, records };
}

describe('CsvReader', () => {
  it('reads the header and the rows with the line each starts on', async () => {
    const { header, records } = await read('a,b,c\n1,2,3\n\n4,5,6\n');
    expect(header).toEqual(['a', 'b', 'c']);
    expect(records).toEqual([
      { line: 2, fields: ['1', '2', '3'], width: 3 },
      { line: 4, fields: ['4', '5', '6'], width: 3 },
    ]);
  });

  it('reads quoted fields with commas, doubled quotes and line breaks, and counts physical lines', async () => {
    const { records } = await read('a,b\r\n"x, y","say ""hi"""\r\n"two\r\nlines",z\r\nlast,"",\r\n');
    expect(records).toEqual([
      { line: 2, fields: ['x, y', 'say "hi"'], width: 2 },
      { line: 3, fields: ['two\nlines', 'z'], width: 2 },
      { line: 5, fields: ['last', '', ''], width: 3 },
    ]);
  });

  it('drops a byte-order mark and reads a last line without a line break', async () => {
    const { header, records } = await read('\uFEFFKenteken,Merk\nAB123C,VOLKSWAGEN');
    expect(header).toEqual(['Kenteken', 'Merk']);
    expect(records).toEqual([{ line: 2, fields: ['AB123C', 'VOLKSWAGEN'], width: 2 }]);
  });

  it('keeps a quote inside an unquoted field as a character', async () => {
    const { records } = await read('a,b\n12" wheels,x\n');
    expect(records).toEqual([{ line: 2, fields: ['12" wheels', 'x'], width: 2 }]);
  });

  it('hands over only the columns asked for, in the order asked, and still counts every field', async () => {
    const { records } = await read('a,b,c,d\n1,2,3,4\n"q,1",2,"3",4,5\n', [3, 0, -1]);
    expect(records).toEqual([
      { line: 2, fields: ['4', '1', ''], width: 4 },
      { line: 3, fields: ['4', 'q,1', ''], width: 5 },
    ]);
  });

  it('reports a character after a closing quote and reads on', async () => {
    const { records } = await read('a,b\n"x"y,1\nok,2\n');
    expect(records[0]).toEqual({ line: 2, error: 'unexpected character after the closing quote of field 1' });
    expect(records[1]).toEqual({ line: 3, fields: ['ok', '2'], width: 2 });
  });

  it('reports a quoted field left open at the end of the file at the line it starts on', async () => {
    const { records } = await read('a,b\nok,1\n"never closed,2\nmore,3\n');
    expect(records).toEqual([
      { line: 2, fields: ['ok', '1'], width: 2 },
      { line: 3, error: 'a quoted field is not closed before the end of the file' },
    ]);
  });

  it('gives up on a quoted field that stays open for more than MAX_RECORD_CHARS and reads on', async () => {
    const filler = `${'x'.repeat(1000)}\n`.repeat(Math.ceil(MAX_RECORD_CHARS / 1000) + 10);
    const { records } = await read(`a,b\n"open,1\n${filler}after,2\n`);
    const problems = records.filter(isCsvProblem);
    expect(problems).toEqual([{ line: 2, error: `a quoted field is not closed within ${MAX_RECORD_CHARS} characters` }]);
    expect(records.at(-1)).toMatchObject({ fields: ['after', '2'] });
  });

  it('reports a line longer than MAX_RECORD_CHARS and reads on after it', async () => {
    const { records } = await read(`a,b\n${'y'.repeat(MAX_RECORD_CHARS * 3)}\nafter,2\n`);
    expect(records).toEqual([
      { line: 2, error: `the line is longer than ${MAX_RECORD_CHARS} characters` },
      { line: 3, fields: ['after', '2'], width: 2 },
    ]);
  });

  it('refuses an empty file', async () => {
    await expect(CsvReader.open(file('\n\n'))).rejects.toThrow(CsvFileError);
    await expect(CsvReader.open(file(''))).rejects.toThrow(/the file is empty: no header line/);
  });
});
