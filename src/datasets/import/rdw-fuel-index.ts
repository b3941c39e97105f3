import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import type { InputRule } from '../../catalogue/input-rules.js';
import { CsvFileError, CsvReader, isCsvProblem } from './csv-reader.js';
import { FUEL, locateColumns } from './rdw-columns.js';

/** Rows per INSERT statement while filling. */
const APPEND_ROWS = 100;
/** Page cache of the index: enough for the B-tree's upper levels, and a fixed ceiling on memory. */
const CACHE_KIB = 64 * 1024;

export interface FuelIndexOptions {
  /** Called for every fuel row that cannot be used, with its line number. */
  readonly onInvalid?: (line: number, reason: string) => void;
  /** Called now and then with the rows read so far. */
  readonly onProgress?: (rowsRead: number, bytesRead: number, size: number) => void;
  /** Rows between progress calls. */
  readonly progressEvery?: number;
}

export interface FuelIndexSummary {
  readonly rowsRead: number;
  /** Distinct plates with a fuel. */
  readonly plates: number;
  readonly invalid: number;
}

/**
 * The primary fuel of each plate from the RDW "Gekentekende voertuigen brandstof" export, ready to
 * join to register rows by Kenteken.
 *
 * The fuel file is about as long as the register (one row per fuel per vehicle; ~14-17 M rows), so
 * it is not held in memory: a JavaScript Map grows by ~100 bytes of heap per plate (measured by
 * `npm run bench:rdw-import`), which is gigabytes for the whole register, and V8 refuses a Map of
 * more than 2^24 (16.7 M) entries outright. Instead the plates go into a private SQLite file in the
 * temporary directory (TMPDIR), with a fixed page cache, and every register row looks its plate
 * up there (a primary-key read of a few microseconds). The file is deleted on close. It is SQLite
 * whatever engine the store uses: it is the importer's scratch space, not the store.
 */
export class FuelIndex {
  private constructor(
    private readonly dir: string,
    private readonly db: SQLite.Database,
    private readonly lookup: SQLite.Statement<[string], string>,
    readonly summary: FuelIndexSummary,
  ) {}

  /**
   * Reads the fuel CSV. Of several fuels of one plate, the lowest `Brandstof volgnummer` (1 = the
   * primary fuel) is kept. Plates are normalised with `plateRule`, as register keys are.
   */
  static async build(path: string, plateRule: InputRule, options: FuelIndexOptions = {}): Promise<FuelIndex> {
    const dir = mkdtempSync(join(tmpdir(), 'vehicle-lookup-fuel-'));
    const db = new SQLite(join(dir, 'fuel.sqlite'));
    try {
      // Scratch data, rebuilt on every run: no journal, no fsync.
      db.pragma('journal_mode = OFF');
      db.pragma('synchronous = OFF');
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma(`cache_size = -${CACHE_KIB}`);
      // Rows are appended as read, then sorted once into the keyed table: appending and one sort
      // cost about half of inserting each row into a B-tree in random order.
      db.exec('CREATE TABLE raw (plate TEXT NOT NULL, seq INTEGER NOT NULL, fuel TEXT NOT NULL)');
      const values = Array.from({ length: APPEND_ROWS }, () => '(?, ?, ?)').join(', ');
      const appendMany = db.prepare(`INSERT INTO raw (plate, seq, fuel) VALUES ${values}`);
      const appendOne = db.prepare('INSERT INTO raw (plate, seq, fuel) VALUES (?, ?, ?)');
      // One transaction for the whole fill (the file is private and has no journal), written a
      // chunk of the CSV at a time, so no more than a chunk's rows wait in memory.
      db.exec('BEGIN');
      const summary = await FuelIndex.fill(path, plateRule, options, (rows) => {
        let i = 0;
        for (; i + APPEND_ROWS <= rows.length; i += APPEND_ROWS) appendMany.run(rows.slice(i, i + APPEND_ROWS).flat());
        for (; i < rows.length; i += 1) appendOne.run(rows[i]);
      });
      db.exec('COMMIT');
      // SQLite returns the other columns of the row holding min(seq) (its documented "bare column"
      // rule), so each plate keeps its primary fuel; of equal numbers, any.
      db.exec(`CREATE TABLE fuel (plate TEXT PRIMARY KEY, fuel TEXT NOT NULL) WITHOUT ROWID;
        INSERT INTO fuel (plate, fuel) SELECT plate, fuel FROM (SELECT plate, fuel, min(seq) FROM raw GROUP BY plate) ORDER BY plate;
        DROP TABLE raw;`);
      const plates = db.prepare('SELECT count(*) FROM fuel').pluck().get() as number;
      const lookup = db.prepare<[string], string>('SELECT fuel FROM fuel WHERE plate = ?').pluck();
      return new FuelIndex(dir, db, lookup, { ...summary, plates });
    } catch (error) {
      db.close();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  private static async fill(
    path: string,
    plateRule: InputRule,
    options: FuelIndexOptions,
    write: (rows: ReadonlyArray<readonly [string, number, string]>) => void,
  ): Promise<{ rowsRead: number; invalid: number }> {
    const reader = await CsvReader.open(path);
    const size = reader.size;
    const every = options.progressEvery ?? 10_000;
    let col;
    try {
      col = locateColumns(reader.header, FUEL, ['kenteken', 'volgnummer', 'omschrijving'], '"Gekentekende voertuigen brandstof"');
    } catch (error) {
      await reader.close();
      throw error instanceof CsvFileError ? new CsvFileError(`${path}: ${error.message}`) : error;
    }
    const width = reader.header.length;
    let rowsRead = 0;
    let invalid = 0;
    const pending: Array<readonly [string, number, string]> = [];
    const bad = (line: number, reason: string): void => {
      invalid += 1;
      options.onInvalid?.(line, reason);
    };
    for await (const batch of reader.rows([col.kenteken, col.volgnummer, col.omschrijving])) {
      for (const record of batch) {
        rowsRead += 1;
        if (rowsRead % every === 0) options.onProgress?.(rowsRead, reader.bytesRead, size);
        if (isCsvProblem(record)) {
          bad(record.line, record.error);
          continue;
        }
        if (record.width !== width) {
          bad(record.line, `has ${record.width} fields, the header has ${width}`);
          continue;
        }
        const [kenteken = '', volgnummer = '', omschrijving = ''] = record.fields;
        const plate = plateRule.normalise(kenteken);
        if (!plate.ok) {
          bad(record.line, `Kenteken ${plate.reason}`);
          continue;
        }
        const seqText = volgnummer.trim();
        if (!/^\d+$/.test(seqText)) {
          bad(record.line, `Brandstof volgnummer "${seqText}" is not a whole number`);
          continue;
        }
        const fuel = omschrijving.trim();
        if (fuel === '') {
          bad(record.line, 'Brandstof omschrijving is empty');
          continue;
        }
        pending.push([plate.value, Number(seqText), fuel]);
      }
      write(pending);
      pending.length = 0;
    }
    options.onProgress?.(rowsRead, size, size);
    return { rowsRead, invalid };
  }

  /** The primary fuel of a normalised plate, if the fuel file had one. */
  fuelOf(plate: string): string | undefined {
    return this.lookup.get(plate);
  }

  close(): void {
    this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
