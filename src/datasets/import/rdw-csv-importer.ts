import { Worker } from 'node:worker_threads';
import type { Catalogue } from '../../catalogue/catalogue.js';
import type { InputRule } from '../../catalogue/input-rules.js';
import type { Clock } from '../../shared/clock.js';
import type { Storage } from '../../storage/create-database.js';
import type { Tx } from '../../storage/database.js';
import type { RecordRepository, StoredRecord } from '../record.repository.js';
import { CsvFileError } from './csv-reader.js';
import type { FuelIndexSummary } from './rdw-fuel-index.js';
import { InFlightLimit, type RdwReaderAck, type RdwReaderData, type RdwReaderMessage } from './rdw-reader.protocol.js';
import { rdwTarget, RdwRowSource, type RdwFile, type RdwProgress, type RdwSourceOptions, type RdwSourceSummary } from './rdw-row-source.js';

export { RDW_OPERATION, type RdwFile, type RdwPhase, type RdwProgress } from './rdw-row-source.js';

/**
 * The reader thread's entry. Compiled (dist/, npm run build) this module is JavaScript and so is
 * its neighbour, which a worker loads directly; run from source (tsx), a worker thread does not
 * inherit the loader, so it starts at ts-worker-boot.js, which registers tsx first.
 */
const COMPILED = import.meta.url.endsWith('.js');
const READER_ENTRY = new URL(COMPILED ? './rdw-reader.worker.js' : './rdw-reader.worker.ts', import.meta.url);
const WORKER_START = COMPILED ? READER_ENTRY : new URL('../../shared/ts-worker-boot.js', import.meta.url);

/**
 * Rows per transaction, at most. The key index takes the plates in random order, so each
 * transaction dirties index pages all over the file and writes every one of them to the WAL at
 * commit; the fewer commits, the less of that. Measured on 1 M rows: 5,000 rows per transaction
 * cost 18 CPU-s in SQLite, 100,000 rows 12 CPU-s. The rows are not held in memory meanwhile: they
 * are written a run of SORTED_ROWS at a time as they arrive, inside the open transaction (SQLite
 * keeps the dirty pages in its page cache, spilling to the WAL past it).
 */
export const TRANSACTION_ROWS = 100_000;
/**
 * A transaction is committed after this long even if it has fewer rows, so another process's
 * writer (a server's debits) gets the write lock well within its wait (SQLITE_LOCK_WAIT_MS, 10 s;
 * it waits without blocking its event loop). Readers are never blocked (WAL).
 */
export const TRANSACTION_MS = 1_500;
const PROGRESS_EVERY = 10_000;
/**
 * Rows written at once in key order. The store's key index takes plates in file order all over
 * it; the same rows in runs of 10,000 sorted cost SQLite about half the CPU (200,000 rows: 1.5
 * against 3.3 CPU-s; runs of 1,000 gain little, 2.9). The run is gathered here from the reader's
 * batches (SINK_ROWS, rdw-row-source.ts), not made by the reader: rows kept that long on the
 * reader's thread outlive its young generation, and its garbage collection doubled its CPU
 * (docs/benchmarks.md, issue 35).
 */
export const SORTED_ROWS = 10_000;

/**
 * A run of rows reordered by key (JavaScript's string order; for the letters and digits of a plate
 * the same as SQLite's), so the store's index takes them in one sweep. The sort is stable: a plate
 * given twice keeps its file order, so its later row is still written last and wins.
 */
export function inKeyOrder(keys: readonly string[], documents: readonly string[]): { keys: string[]; documents: string[] } {
  const order = Array.from(keys.keys()).sort((a, b) => {
    const ka = keys[a] ?? '';
    const kb = keys[b] ?? '';
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  return { keys: order.map((i) => keys[i] ?? ''), documents: order.map((i) => documents[i] ?? '') };
}
export interface RdwImportOptions {
  /** Import the valid rows even when some rows (of either file) are invalid. */
  readonly skipInvalid: boolean;
  /** Recorded with every record. */
  readonly source: string;
  /** The "Gekentekende voertuigen brandstof" CSV, joined by Kenteken for FuelType. */
  readonly fuelPath?: string | undefined;
  /** Called for every invalid row, as soon as it is found. */
  readonly onInvalid?: (file: RdwFile, line: number, reason: string) => void;
  /** Called every `progressEvery` rows and at the end of each phase. */
  readonly onProgress?: (progress: RdwProgress) => void;
  readonly progressEvery?: number;
  /**
   * Where the files are read and mapped: a worker thread (the default), so reading and writing use
   * both cores, or this thread (tests that measure this thread's memory).
   */
  readonly readOn?: 'worker' | 'this-thread';
}

export interface RdwImportSummary {
  /** Data rows of the register file (the header not counted). */
  readonly rowsRead: number;
  /** Valid register rows. */
  readonly imported: number;
  /** Records inserted or changed (a plate given twice counts twice). */
  readonly written: number;
  /** Valid rows that left the store as it was (same document already stored). */
  readonly unchanged: number;
  /** Invalid rows of both files. */
  readonly invalid: number;
  /** Imported rows that got a FuelType from the fuel file. */
  readonly withFuel: number;
  /** The fuel file's figures, when one was given. */
  readonly fuel?: FuelIndexSummary;
  /** False when invalid rows stopped the import (nothing was written). */
  readonly committed: boolean;
}

/** What the reading side reports, in order. */
type ReaderEvent =
  | { readonly type: 'invalid'; readonly file: RdwFile; readonly line: number; readonly reason: string }
  | { readonly type: 'progress'; readonly progress: RdwProgress }
  | { readonly type: 'rows'; readonly keys: readonly string[]; readonly documents: readonly string[] }
  | { readonly type: 'done'; readonly summary: RdwSourceSummary }
  | { readonly type: 'failed'; readonly error: Error };

/** The reading side as the writer sees it. */
interface Reader {
  next(): Promise<ReaderEvent>;
  /** A batch of rows has been taken (into the run being gathered); the reader may send another. */
  taken(): void;
  stop(): Promise<void>;
}

/** Events in arrival order, handed out one at a time. */
class EventQueue {
  private readonly events: ReaderEvent[] = [];
  private waiting: ((event: ReaderEvent) => void) | undefined;

  push(event: ReaderEvent): void {
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting(event);
    } else this.events.push(event);
  }

  next(): Promise<ReaderEvent> {
    const event = this.events.shift();
    if (event !== undefined) return Promise.resolve(event);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }
}

/** The error a reader thread reported, as the CLI can tell it apart (a CSV problem, a missing file). */
function readerError(message: Extract<RdwReaderMessage, { type: 'failed' }>): Error {
  if (message.name === 'CsvFileError') return new CsvFileError(message.message);
  return Object.assign(new Error(message.message), { code: message.code, path: message.path });
}

/** How long a stopped reader may take to clean up before its thread is ended regardless. */
const READER_STOP_MS = 10_000;

/** Reads on a worker thread (rdw-reader.worker.ts). */
function readOnWorker(options: RdwSourceOptions): Reader {
  const queue = new EventQueue();
  const worker = new Worker(WORKER_START, { workerData: { entry: READER_ENTRY.href, ...options } satisfies RdwReaderData });
  let finished: () => void = () => undefined;
  const last = new Promise<void>((resolve) => {
    finished = resolve;
  });
  worker.on('message', (message: RdwReaderMessage) => {
    if (message.type === 'rows') queue.push({ type: 'rows', keys: message.keys.split('\n'), documents: message.documents.split('\n') });
    else if (message.type === 'failed') queue.push({ type: 'failed', error: readerError(message) });
    else queue.push(message);
    if (message.type === 'done' || message.type === 'failed') finished();
  });
  worker.on('error', (error) => {
    queue.push({ type: 'failed', error });
  });
  worker.on('exit', (code) => {
    queue.push({ type: 'failed', error: new Error(`the RDW reader thread stopped (exit code ${code})`) });
    finished();
  });
  return {
    next: () => queue.next(),
    taken: () => {
      worker.postMessage({ type: 'taken' } satisfies RdwReaderAck);
    },
    // Ending the thread at once would skip its clean-up and leave the fuel index on disk: it is
    // asked to stop, and ended once it has reported (or after READER_STOP_MS).
    stop: async () => {
      worker.postMessage({ type: 'stop' } satisfies RdwReaderAck);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([last, new Promise((resolve) => (timer = setTimeout(resolve, READER_STOP_MS)))]);
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}

/** Reads on this thread, with the same hand-over as the worker. */
function readOnThisThread(plateRule: InputRule, options: RdwSourceOptions): Reader {
  const queue = new EventQueue();
  const limit = new InFlightLimit();
  const running = new RdwRowSource(plateRule, options)
    .run({
      invalid: (file, line, reason) => {
        limit.check();
        queue.push({ type: 'invalid', file, line, reason });
      },
      progress: (progress) => {
        limit.check();
        queue.push({ type: 'progress', progress });
      },
      async rows(keys, documents) {
        await limit.acquire();
        queue.push({ type: 'rows', keys, documents });
      },
    })
    .then(
      (summary) => {
        queue.push({ type: 'done', summary });
      },
      (error: unknown) => {
        queue.push({ type: 'failed', error: error instanceof Error ? error : new Error(String(error)) });
      },
    );
  return {
    next: () => queue.next(),
    taken: () => {
      limit.release();
    },
    // The writer is done, or gave up: a reader waiting to hand over a batch must not wait forever.
    stop: () => {
      limit.stop(new Error('the RDW import stopped'));
      return running;
    },
  };
}

/**
 * Imports the RDW "Gekentekende voertuigen" CSV export into the CheckNetherlands dataset (issue 4
 * "Bulk data"). Two threads share the work: a reader (RdwRowSource, on a worker thread) indexes
 * the fuel file, checks the register and maps its rows; this thread writes them. SQLite's own work
 * is about half of the whole, so on two cores the rate rises by half (bench:rdw-import, 1 M rows
 * with --skip-invalid: ~50,000 rows/s on one thread, ~75,000 on two). Memory stays flat
 * whatever the file size: files are streamed, the fuel index lives on disk, at most
 * BATCHES_IN_FLIGHT batches wait between the threads, and rows are written as they arrive, in
 * runs of SORTED_ROWS.
 * As with the JSON Lines import, without `skipInvalid` nothing is written when any row is invalid.
 * Re-running is idempotent: unchanged records are not rewritten.
 */
export class RdwCsvImporter {
  private readonly dataset: string;
  private readonly plateRule: InputRule;

  constructor(
    private readonly storage: Storage,
    private readonly records: RecordRepository,
    catalogue: Catalogue,
    private readonly clock: Clock,
    /** Called after each committed transaction, so caches of records drop what it replaced. */
    private readonly afterWrite: () => void = () => undefined,
  ) {
    const target = rdwTarget(catalogue);
    this.dataset = target.dataset;
    this.plateRule = target.plateRule;
  }

  async importFile(path: string, options: RdwImportOptions): Promise<RdwImportSummary> {
    const sourceOptions: RdwSourceOptions = {
      registerPath: path,
      fuelPath: options.fuelPath,
      skipInvalid: options.skipInvalid,
      progressEvery: options.progressEvery ?? PROGRESS_EVERY,
    };
    const reader = options.readOn === 'this-thread' ? readOnThisThread(this.plateRule, sourceOptions) : readOnWorker(sourceOptions);
    const restoreSettings = await this.storage.tuneForBulkWrites();
    try {
      const { summary, written } = await this.write(reader, options);
      return {
        rowsRead: summary.rowsRead,
        imported: summary.imported,
        written,
        unchanged: summary.imported - written,
        invalid: summary.invalid,
        withFuel: summary.withFuel,
        ...(summary.fuel ? { fuel: summary.fuel } : {}),
        committed: summary.committed,
      };
    } finally {
      await reader.stop();
      await restoreSettings();
    }
  }

  /**
   * Takes the reader's events until it is done: reports are passed on, rows written in runs of
   * SORTED_ROWS in key order. A transaction is opened when rows arrive (never while the reader only
   * checks or indexes) and committed after TRANSACTION_ROWS rows or TRANSACTION_MS.
   */
  private async write(reader: Reader, options: RdwImportOptions): Promise<{ summary: RdwSourceSummary; written: number }> {
    let written = 0;
    for (;;) {
      const event = await reader.next();
      if (event.type === 'done') return { summary: event.summary, written };
      if (event.type === 'failed') throw event.error;
      if (event.type !== 'rows') {
        this.report(event, options);
        continue;
      }
      // An object, not lets: they are set inside a callback the type-checker cannot follow.
      const window: { started: boolean; end?: ReaderEvent } = { started: false };
      const now = this.clock.now().toISOString();
      written += await this.storage.transaction(async (tx) => {
        // Storage.transaction may try a transaction again after SQLITE_BUSY; rows already taken from
        // the reader would be lost, so that must never happen once this one has begun.
        if (window.started) throw new Error('an import transaction was tried again after it had taken rows');
        window.started = true;
        const opened = performance.now();
        let changed = 0;
        let rows = 0;
        let first: ReaderEvent | undefined = event;
        do {
          const run = await this.gather(reader, first, options);
          first = undefined;
          if (run.end !== undefined) window.end = run.end;
          changed += await this.writeRows(tx, inKeyOrder(run.keys, run.documents), now, options.source);
          rows += run.keys.length;
        } while (window.end === undefined && rows < TRANSACTION_ROWS && performance.now() - opened < TRANSACTION_MS);
        return changed;
      });
      this.afterWrite();
      // What was written before the reader failed stays committed, as after an interruption.
      if (window.end?.type === 'failed') throw window.end.error;
      if (window.end?.type === 'done') return { summary: window.end.summary, written };
    }
  }

  /**
   * The next run of rows to write: the reader's batches (from `first`, when given) up to SORTED_ROWS
   * rows, each acknowledged as it is taken; reports met meanwhile are passed on. Stops early at the
   * reader's last event, which it returns as `end`.
   */
  private async gather(reader: Reader, first: ReaderEvent | undefined, options: RdwImportOptions): Promise<{ keys: string[]; documents: string[]; end?: ReaderEvent }> {
    const keys: string[] = [];
    const documents: string[] = [];
    let next = first ?? (await reader.next());
    for (;;) {
      if (next.type === 'done' || next.type === 'failed') return { keys, documents, end: next };
      if (next.type === 'rows') {
        keys.push(...next.keys);
        documents.push(...next.documents);
        reader.taken();
        if (keys.length >= SORTED_ROWS) return { keys, documents };
      } else this.report(next, options);
      next = await reader.next();
    }
  }

  private writeRows(tx: Tx, batch: { readonly keys: readonly string[]; readonly documents: readonly string[] }, now: string, source: string): Promise<number> {
    const records: StoredRecord[] = batch.keys.map((lookupKey, i) => ({ dataset: this.dataset, lookupKey, document: batch.documents[i] ?? '', source }));
    return this.records.upsertRecords(tx, records, now);
  }

  private report(event: Extract<ReaderEvent, { type: 'invalid' | 'progress' }>, options: RdwImportOptions): void {
    if (event.type === 'invalid') options.onInvalid?.(event.file, event.line, event.reason);
    else options.onProgress?.(event.progress);
  }
}
