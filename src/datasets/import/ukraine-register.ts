import type { InputRule } from '../../catalogue/input-rules.js';
import { CsvFileError, CsvReader, isCsvProblem, type CsvInput } from './csv-reader.js';
import { RegisterFileError, type RegisterReadSummary, type RegisterSink } from './staged-register-importer.js';
import { fileInput } from './csv-reader.js';
import { isZipFile, zipEntryInputs } from './zip-input.js';

/** The operation whose dataset the MVS registration operations fill. */
export const UKRAINE_OPERATION = 'CheckUkraine';

/**
 * The columns read, by their header names (upper-cased; the 2013-2018 files write them in lower
 * case, later ones upper case and quoted). The 2021-2025 files add VIN after MODEL; the 2026 files
 * drop N_REG_NEW (the plate), REG_ADDR_KOATUU and DEP_CODE, fuse OPER_CODE and OPER_NAME into
 * `CD.OPER_CODE||'-'||CD.OPERAS` and reorder KIND;PURPOSE;BODY (upstream-sources.md §10.3):
 * every column is found by name, so all three layouts read alike.
 */
const COLUMNS = ['D_REG', 'DEP', 'BRAND', 'MODEL', 'VIN', 'MAKE_YEAR', 'COLOR', 'FUEL', 'CAPACITY', 'N_REG_NEW'] as const;
export type Column = (typeof COLUMNS)[number];
/** The columns in the order rows are picked (fieldsOf), for its test. */
export const COLUMNS_FOR_TEST: readonly Column[] = COLUMNS;
/** Without these a file is not an MVS registration-operations file. */
const REQUIRED: readonly Column[] = ['D_REG', 'BRAND', 'MODEL', 'MAKE_YEAR'];

/** Why rows carry no record (RegisterReadSummary.skipped). */
export const NO_PLATE = 'without a plate (N_REG_NEW empty, or absent: files from 2026 on carry none)';
export const BAD_PLATE = 'with a plate that is not letters and digits';

/** `D_REG` as YYYY-MM-DD: written `YYYY-MM-DD` (2013-2018), `DD.MM.YYYY` (2019-2022) or `DD.MM.YY` (2023 on). */
export function operationDate(value: string): string | undefined {
  const v = value.trim();
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (m) return valid(m[1] ?? '', m[2] ?? '', m[3] ?? '');
  m = /^(\d{2})\.(\d{2})\.(\d{4}|\d{2})$/.exec(v);
  if (m) {
    const year = m[3] ?? '';
    return valid(year.length === 2 ? `20${year}` : year, m[2] ?? '', m[1] ?? '');
  }
  return undefined;
}

function valid(year: string, month: string, day: string): string | undefined {
  const mm = Number(month);
  const dd = Number(day);
  return mm >= 1 && mm <= 12 && dd >= 1 && dd <= 31 ? `${year}-${month}-${day}` : undefined;
}

/** Junk the FUEL and other text columns hold for "nothing" (§10.3). */
const NOTHING = new Set(['', 'NULL', 'НЕ ВИЗНАЧЕНО', '.', '-']);
/** The longest of NOTHING: a longer value is something, without upper-casing it. */
const NOTHING_LONGEST = Math.max(...[...NOTHING].map((v) => v.length));
const clean = (value: string | undefined): string => {
  const v = (value ?? '').trim();
  // Every field of every row passes here: toUpperCase only for values short enough to be junk.
  return v.length <= NOTHING_LONGEST && NOTHING.has(v.toUpperCase()) ? '' : v;
};

/** The fields of one row by column name. */
export type UkraineFields = Readonly<Record<Column, string>>;

/** A JSON member `,"name":value` of a text (JSON.stringify escapes it exactly as it would inside a document). */
const text = (name: string, value: string): string => `,"${name}":${JSON.stringify(value)}`;
const textValue = (name: string, value: string): string => `,"${name}":{"CurrentTextValue":${JSON.stringify(value)}}`;

/**
 * The CheckUkraine vehicleJson of one operation, in the shape of the sample dataset's Ukraine
 * records (docs/import-format.md has the table). Written as text, member by member, in the order
 * JSON.stringify of the same object would write them: about a fifth of reading a file went into
 * building the object and stringifying it (profile of 2026-11-28, docs/benchmarks.md). The
 * object-building version stays in test/import-bulk/ukraine-document.unit.test.ts as the judge.
 */
export function vehicleDocument(f: UkraineFields, date: string): string {
  const brand = clean(f.BRAND);
  const model = clean(f.MODEL);
  const year = clean(f.MAKE_YEAR);
  const cc = clean(f.CAPACITY);
  const fuel = clean(f.FUEL);
  const colour = clean(f.COLOR);
  const department = clean(f.DEP);
  const vin = clean(f.VIN).toUpperCase();
  let json = `{"Description":${JSON.stringify(model === '' ? brand : `${brand} ${model}`)}`;
  if (/^\d{4}$/.test(year)) json += text('RegistrationYear', year);
  json += textValue('CarMake', brand);
  if (model !== '') json += textValue('CarModel', model);
  json += text('MakeDescription', brand);
  if (model !== '') json += text('ModelDescription', model);
  if (/^\d+(\.\d+)?$/.test(cc) && Number(cc) > 0) json += textValue('EngineSize', String(Math.round(Number(cc))));
  if (fuel !== '') json += textValue('FuelType', fuel);
  if (colour !== '') json += text('Colour', colour);
  json += text('RegistrationDate', date);
  if (department !== '') json += text('Department', department);
  if (/^[A-Z0-9]{5,17}$/.test(vin)) json += text('VechileIdentificationNumber', vin);
  return `${json}}`;
}

/** The CSV inputs of one argument: the CSV entries of a ZIP (`.csv`, or `.сsv` with a Cyrillic с), or the file itself. */
async function* inputsOf(path: string): AsyncGenerator<CsvInput> {
  if (await isZipFile(path)) yield* zipEntryInputs(path, (name) => /\.[cс]sv$/i.test(name));
  else yield fileInput(path);
}

/**
 * Reads the MVS registration-operations files (upstream-sources.md §10.3: `;`-delimited, UTF-8 or
 * Windows-1251, ZIP or CSV) into the sink: one record per operation that names a plate, ranked by
 * its date and then its place in the files, so the latest operation of each plate wins. A file
 * that is not one, a line with the wrong number of fields or an unreadable date stops the import
 * with the line (nothing is written); rows without a plate are counted and passed over.
 */
export async function readUkraineFiles(paths: readonly string[], plateRule: InputRule, sink: RegisterSink, progressEvery = 10_000): Promise<RegisterReadSummary> {
  let rowsRead = 0;
  const skipped: Record<string, number> = {};
  const skip = (reason: string): void => {
    skipped[reason] = (skipped[reason] ?? 0) + 1;
  };
  let fileNumber = 0;
  for (const path of paths) {
    let entries = 0;
    for await (const input of inputsOf(path)) {
      entries += 1;
      fileNumber += 1;
      const order = String(fileNumber).padStart(4, '0');
      let reader: CsvReader;
      try {
        reader = await CsvReader.open(input, { delimiter: ';', encoding: 'detect' });
      } catch (error) {
        throw asFileError(error, input.name);
      }
      const names = reader.header.map((h) => h.trim().toUpperCase());
      const at = Object.fromEntries(COLUMNS.map((c) => [c, names.indexOf(c)])) as Record<Column, number>;
      const missing = REQUIRED.filter((c) => at[c] < 0);
      if (missing.length > 0) {
        await reader.close();
        throw new RegisterFileError(`${input.name}: not an MVS registration-operations file: no ${missing.join(', ')} column`);
      }
      const width = reader.header.length;
      try {
        for await (const batch of reader.rows(COLUMNS.map((c) => at[c]))) {
          for (const row of batch) {
            rowsRead += 1;
            if (rowsRead % progressEvery === 0) sink.progress(rowsRead, reader.bytesRead, reader.size);
            if (isCsvProblem(row)) throw new RegisterFileError(`${input.name}: line ${row.line}: ${row.error}`);
            if (row.width !== width) throw new RegisterFileError(`${input.name}: line ${row.line}: has ${row.width} fields, the header has ${width} (a cut-short file?)`);
            const f = fieldsOf(row.fields);
            const date = operationDate(f.D_REG);
            if (date === undefined) throw new RegisterFileError(`${input.name}: line ${row.line}: D_REG "${f.D_REG.trim()}" is not a date (YYYY-MM-DD, DD.MM.YYYY or DD.MM.YY)`);
            const plateText = clean(f.N_REG_NEW);
            if (plateText === '') {
              skip(NO_PLATE);
              continue;
            }
            if (clean(f.BRAND) === '') {
              skip('without a BRAND');
              continue;
            }
            const plate = plateRule.normalise(plateText);
            if (!plate.ok) {
              skip(BAD_PLATE);
              continue;
            }
            sink.record(plate.value, `${date}|${order}|${String(row.line).padStart(10, '0')}`, vehicleDocument(f, date));
          }
        }
      } catch (error) {
        throw asFileError(error, input.name);
      }
      sink.progress(rowsRead, reader.size, reader.size);
    }
    if (entries === 0) throw new RegisterFileError(`${path}: the ZIP file holds no CSV file`);
  }
  return { rowsRead, skipped };
}

/** A row's fields (in COLUMNS order, as `rows` picks them) by name: an object literal, not Object.fromEntries per row. */
export function fieldsOf(fields: readonly string[]): UkraineFields {
  return {
    D_REG: fields[0] ?? '',
    DEP: fields[1] ?? '',
    BRAND: fields[2] ?? '',
    MODEL: fields[3] ?? '',
    VIN: fields[4] ?? '',
    MAKE_YEAR: fields[5] ?? '',
    COLOR: fields[6] ?? '',
    FUEL: fields[7] ?? '',
    CAPACITY: fields[8] ?? '',
    N_REG_NEW: fields[9] ?? '',
  };
}

/** Reading errors as RegisterFileError naming the file (a damaged ZIP entry fails inside the CSV reader). */
function asFileError(error: unknown, name: string): unknown {
  if (error instanceof RegisterFileError) return error;
  if (error instanceof CsvFileError) return new RegisterFileError(error.message);
  if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return error;
  if (error instanceof Error) return new RegisterFileError(`${name}: ${error.message}`);
  return error;
}
