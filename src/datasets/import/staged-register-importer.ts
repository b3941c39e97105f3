import type { Catalogue } from '../../catalogue/catalogue.js';
import type { InputRule } from '../../catalogue/input-rules.js';
import type { Clock } from '../../shared/clock.js';
import type { Storage } from '../../storage/create-database.js';
import type { RecordRepository, StoredRecord } from '../record.repository.js';
import { TRANSACTION_MS, TRANSACTION_ROWS } from './rdw-csv-importer.js';
import { RegisterStaging } from './register-staging.js';

/**
 * A register file that cannot be imported: unreadable, malformed or cut short. The message names
 * the file and, where there is one, the record (or line) where reading stopped. Nothing of the
 * file has been written when it is thrown.
 */
export class RegisterFileError extends Error {
  override readonly name = 'RegisterFileError';
}

export type RegisterPhase = 'reading' | 'writing';

export interface RegisterProgress {
  readonly phase: RegisterPhase;
  /** Records read (reading) or written (writing) so far. */
  readonly rows: number;
  /** Reading: bytes of the register read so far and in all (0 when unknown); writing: records done and in all. */
  readonly done: number;
  readonly total: number;
}

/** What a format's reader reports to the importer. */
export interface RegisterSink {
  /** A usable record: its normalised plate, its rank among records of the same plate (RegisterStaging.add) and its document. */
  record(key: string, rank: string, document: string): void;
  progress(rows: number, done: number, total: number): void;
}

/** Figures a format's reader returns; `notes` are lines for the operator (rows without a plate...). */
export interface RegisterReadSummary {
  readonly rowsRead: number;
  /** Rows read that carry no usable record, by reason (shown to the operator). */
  readonly skipped: Readonly<Record<string, number>>;
}

export interface RegisterImportSummary extends RegisterReadSummary {
  /** Distinct plates imported (the best record of each). */
  readonly records: number;
  /** Records inserted or changed. */
  readonly written: number;
  /** Records left as they were (same document already stored). */
  readonly unchanged: number;
}

export interface RegisterImportOptions {
  /** Recorded with every record. */
  readonly source: string;
  readonly onProgress?: (progress: RegisterProgress) => void;
}

/** Records handed to the store per upsert call. */
const WRITE_BATCH = 1_000;

/** The dataset an operation's records go to and the rule its plates are normalised with, from the catalogue. */
export function registerTarget(catalogue: Catalogue, operation: string): { readonly dataset: string; readonly plateRule: InputRule } {
  const op = catalogue.find(operation);
  const rule = op?.parameters.find((p) => p.role === 'key')?.rule;
  if (!op || !rule) throw new Error(`the catalogue has no ${operation} operation with a key rule`);
  return { dataset: op.dataset.name, plateRule: rule };
}

/**
 * Imports a register file that may name a plate several times (DMR, the Ukrainian operations log)
 * in two steps: the format's reader reads the whole file into a RegisterStaging, then the best
 * record of each plate is written to the store in transactions of at most TRANSACTION_ROWS rows or
 * TRANSACTION_MS, as the RDW import writes (so a server's debits get the write lock in time).
 *
 * - A malformed or truncated file stops in the first step: the store is untouched.
 * - An import killed in the second step leaves whole records, each committed with its
 *   transaction: the store is consistent, and running the import again finishes the job.
 * - Re-running is idempotent: RecordRepository.upsertRecords leaves an unchanged record alone.
 */
export class StagedRegisterImporter {
  constructor(
    private readonly storage: Storage,
    private readonly records: RecordRepository,
    private readonly clock: Clock,
    private readonly dataset: string,
    /** Called after each committed transaction, so caches of records drop what it replaced. */
    private readonly afterWrite: () => void = () => undefined,
  ) {}

  async run(read: (sink: RegisterSink) => Promise<RegisterReadSummary>, options: RegisterImportOptions): Promise<RegisterImportSummary> {
    const staging = new RegisterStaging();
    try {
      const summary = await read({
        record: (key, rank, document) => {
          staging.add(key, rank, document);
        },
        progress: (rows, done, total) => options.onProgress?.({ phase: 'reading', rows, done, total }),
      });
      staging.finish();
      const records = staging.keys();
      const written = await this.write(staging, records, options);
      return { ...summary, records, written, unchanged: records - written };
    } finally {
      staging.close();
    }
  }

  private async write(staging: RegisterStaging, total: number, options: RegisterImportOptions): Promise<number> {
    const batches = staging.best(WRITE_BATCH);
    const restoreSettings = await this.storage.tuneForBulkWrites();
    let written = 0;
    let done = 0;
    try {
      let next = batches.next();
      while (next.done !== true) {
        const now = this.clock.now().toISOString();
        // An object, not lets: it is set inside a callback the type-checker cannot follow.
        const window: { started: boolean } = { started: false };
        written += await this.storage.transaction(async (tx) => {
          // Storage.transaction may try again after SQLITE_BUSY; batches already taken would be lost.
          if (window.started) throw new Error('an import transaction was tried again after it had taken rows');
          window.started = true;
          const opened = performance.now();
          let changed = 0;
          let rows = 0;
          while (next.done !== true && rows < TRANSACTION_ROWS && performance.now() - opened < TRANSACTION_MS) {
            const { keys, documents } = next.value;
            const batch: StoredRecord[] = keys.map((lookupKey, i) => ({ dataset: this.dataset, lookupKey, document: documents[i] ?? '', source: options.source }));
            changed += await this.records.upsertRecords(tx, batch, now);
            rows += keys.length;
            done += keys.length;
            options.onProgress?.({ phase: 'writing', rows: done, done, total });
            next = batches.next();
          }
          return changed;
        });
        this.afterWrite();
      }
      return written;
    } finally {
      batches.return(undefined);
      await restoreSettings();
    }
  }
}
