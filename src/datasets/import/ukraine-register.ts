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
type Column = (typeof COLUMNS)[number];
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
const clean = (value: string | undefined): string => {
  const v = (value ?? '').trim();
  return NOTHING.has(v.toUpperCase()) ? '' : v;
};

/**
 * The CheckUkraine vehicleJson of one operation, in the shape of the sample dataset's Ukraine
 * records (docs/import-format.md has the table).
 */
function vehicleDocument(f: Readonly<Record<Column, string>>, date: string): string {
  const brand = clean(f.BRAND);
  const model = clean(f.MODEL);
  const year = clean(f.MAKE_YEAR);
  const cc = clean(f.CAPACITY);
  const fuel = clean(f.FUEL);
  const colour = clean(f.COLOR);
  const department = clean(f.DEP);
  const vin = clean(f.VIN).toUpperCase();
  const document: Record<string, unknown> = { Description: model === '' ? brand : `${brand} ${model}` };
  if (/^\d{4}$/.test(year)) document.RegistrationYear = year;
  document.CarMake = { CurrentTextValue: brand };
  if (model !== '') document.CarModel = { CurrentTextValue: model };
  document.MakeDescription = brand;
  if (model !== '') document.ModelDescription = model;
  if (/^\d+(\.\d+)?$/.test(cc) && Number(cc) > 0) document.EngineSize = { CurrentTextValue: String(Math.round(Number(cc))) };
  if (fuel !== '') document.FuelType = { CurrentTextValue: fuel };
  if (colour !== '') document.Colour = colour;
  document.RegistrationDate = date;
  if (department !== '') document.Department = department;
  if (/^[A-Z0-9]{5,17}$/.test(vin)) document.VechileIdentificationNumber = vin;
  return JSON.stringify(document);
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
            const f = Object.fromEntries(COLUMNS.map((c, i) => [c, row.fields[i] ?? ''])) as Record<Column, string>;
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

/** Reading errors as RegisterFileError naming the file (a damaged ZIP entry fails inside the CSV reader). */
function asFileError(error: unknown, name: string): unknown {
  if (error instanceof RegisterFileError) return error;
  if (error instanceof CsvFileError) return new RegisterFileError(error.message);
  if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return error;
  if (error instanceof Error) return new RegisterFileError(`${name}: ${error.message}`);
  return error;
}
