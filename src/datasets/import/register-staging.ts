import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';

/** Rows per INSERT statement while filling. */
const APPEND_ROWS = 100;
/** Page cache of the scratch file: a fixed ceiling on memory, outside the JavaScript heap. */
const CACHE_KIB = 64 * 1024;
/**
 * Pages of the scratch file, SQLite's largest: the file is written once front to back and read
 * back through one sort, and its sort spills in pages of this size too, so large pages mean a
 * sixteenth of the system calls and page faults of the default 4 KiB. Measured alone (the fill,
 * the sort and the store's writes of 200,000 records, shuffled): DMR's 1.5 KB documents 4.7
 * against 6.5-7.6 CPU-s, Ukraine's 0.4 KB 2.6-2.8 against 2.9-3.0 (docs/benchmarks.md, issue 35).
 */
const PAGE_BYTES = 65_536;

/**
 * The scratch space of a register import whose file names a plate several times (Denmark's DMR
 * keeps deregistered vehicles; Ukraine's file is a log of operations): every usable record is
 * appended with its rank, and once the whole file has been read (and found sound), the
 * highest-ranked record of each plate is read back in key order for the store. Nothing reaches the
 * store before the file has been read to its end, so a malformed or truncated file leaves it as
 * it was.
 *
 * As the RDW fuel index (rdw-fuel-index.ts), a private SQLite file in the temporary directory
 * (TMPDIR), whatever engine the store uses, with no journal and a fixed page cache: the file may
 * hold tens of millions of records, which no JavaScript Map could. Rows are appended unsorted and
 * sorted once at the end, which costs about half of keeping a keyed table in random order. The
 * file is deleted on close (and, being in TMPDIR, lost with the machine if the import is killed).
 */
export class RegisterStaging {
  private readonly dir: string;
  private readonly db: SQLite.Database;
  private readonly appendMany: SQLite.Statement;
  private readonly appendOne: SQLite.Statement;
  private readonly pending: string[] = [];
  private rows = 0;
  private open = true;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'vehicle-lookup-import-'));
    this.db = new SQLite(join(this.dir, 'staging.sqlite'));
    try {
      // Before anything is written: a database's page size is fixed by its first table.
      this.db.pragma(`page_size = ${PAGE_BYTES}`);
      this.db.pragma('journal_mode = OFF');
      this.db.pragma('synchronous = OFF');
      this.db.pragma('locking_mode = EXCLUSIVE');
      this.db.pragma(`cache_size = -${CACHE_KIB}`);
      this.db.exec('CREATE TABLE raw (key TEXT NOT NULL, rank TEXT NOT NULL, document TEXT NOT NULL)');
      const values = Array.from({ length: APPEND_ROWS }, () => '(?, ?, ?)').join(', ');
      this.appendMany = this.db.prepare(`INSERT INTO raw (key, rank, document) VALUES ${values}`);
      this.appendOne = this.db.prepare('INSERT INTO raw (key, rank, document) VALUES (?, ?, ?)');
      // One transaction for the whole fill: the file is private and has no journal.
      this.db.exec('BEGIN');
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** Records appended so far. */
  get size(): number {
    return this.rows;
  }

  /**
   * Appends a record. Of the records of one key, the one with the greatest `rank` (compared as
   * text, so write it to sort: a zero-padded date, then a zero-padded sequence) is kept.
   */
  add(key: string, rank: string, document: string): void {
    this.pending.push(key, rank, document);
    this.rows += 1;
    if (this.pending.length === APPEND_ROWS * 3) {
      this.appendMany.run(this.pending);
      this.pending.length = 0;
    }
  }

  /** Writes what is pending and ends the fill. */
  finish(): void {
    for (let i = 0; i < this.pending.length; i += 3) this.appendOne.run(this.pending[i], this.pending[i + 1], this.pending[i + 2]);
    this.pending.length = 0;
    this.db.exec('COMMIT');
  }

  /** Distinct keys, after `finish`. */
  keys(): number {
    return this.db.prepare('SELECT count(DISTINCT key) FROM raw').pluck().get() as number;
  }

  /**
   * The best record of each key, in key order, in batches. SQLite returns the other columns of the
   * row holding max(rank) (its documented "bare column" rule).
   */
  *best(batchRows: number): Generator<{ readonly keys: string[]; readonly documents: string[] }> {
    const rows = this.db.prepare('SELECT key, document, max(rank) FROM raw GROUP BY key ORDER BY key').raw().iterate() as IterableIterator<[string, string, string]>;
    let keys: string[] = [];
    let documents: string[] = [];
    for (const [key, document] of rows) {
      keys.push(key);
      documents.push(document);
      if (keys.length === batchRows) {
        yield { keys, documents };
        keys = [];
        documents = [];
      }
    }
    if (keys.length > 0) yield { keys, documents };
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    if (this.db.open) this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
