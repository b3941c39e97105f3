import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Clock } from '../../shared/clock.js';
import type { Storage } from '../../storage/create-database.js';
import { keptPerOperation } from '../kept-per-operation.js';
import type { RecordRepository, StoredOperationRecord, StoredRating, StoredRecord } from '../record.repository.js';
import type { RecordValidator, ValidatedLine } from './record-validator.js';

export interface ImportOptions {
  /** Import the valid lines even when some are invalid. */
  readonly skipInvalid: boolean;
  /** Recorded with every record (`import`, `sample`...). */
  readonly source: string;
  /** Called for every invalid line, as soon as it is found. */
  readonly onInvalid?: (lineNumber: number, reason: string) => void;
  /**
   * Called now and then (every 10,000 lines and at the end of each pass) with the lines and the
   * bytes of the file read so far in this pass.
   */
  readonly onProgress?: (linesRead: number, phase: ImportPhase, bytesRead: number) => void;
  /** Called as each pass over the file starts: `checking` (without skipInvalid), then `importing`. */
  readonly onPhase?: (phase: ImportPhase) => void;
  /**
   * Stops the import between two lines (the server shutting down): importFile rejects with the
   * signal's reason. Batches already committed stay, as after an interrupted CLI import.
   */
  readonly signal?: AbortSignal;
}

/** The passes of an import: checking every line first (all-or-nothing), then writing. */
export type ImportPhase = 'checking' | 'importing';

export interface ImportSummary {
  readonly linesRead: number;
  readonly imported: number;
  readonly invalid: number;
  /** Lines imported per operation name. */
  readonly byOperation: Readonly<Record<string, number>>;
  /** False when invalid lines stopped the import (nothing was written). */
  readonly committed: boolean;
}

/** Rows written per transaction: large enough to be fast, small enough not to starve live lookups. */
const BATCH_SIZE = 2000;
const PROGRESS_EVERY = 10_000;

type LineHandler = (line: ValidatedLine) => Promise<void>;

/**
 * Streams a JSON Lines file into the store (issue 2 "Import format"). Memory stays flat: lines are
 * read one at a time and written in batches. Without `skipInvalid` a first pass checks every line
 * and a file with any invalid line imports nothing.
 */
export class JsonlImporter {
  constructor(
    private readonly validator: RecordValidator,
    private readonly records: RecordRepository,
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly clock: Clock,
    /** Called after each committed batch, so caches of records drop what it replaced. */
    private readonly afterWrite: () => void = () => undefined,
  ) {}

  async importFile(path: string, options: ImportOptions): Promise<ImportSummary> {
    if (!options.skipInvalid) {
      const check = await this.scan(path, options, 'checking', undefined);
      if (check.invalid > 0) {
        return { linesRead: check.linesRead, imported: 0, invalid: check.invalid, byOperation: {}, committed: false };
      }
      // The file was just checked; the second pass reports nothing twice.
      const quiet: ImportOptions = { ...options, onInvalid: () => undefined };
      return this.write(path, quiet);
    }
    return this.write(path, options);
  }

  private async write(path: string, options: ImportOptions): Promise<ImportSummary> {
    const byOperation: Record<string, number> = Object.create(null) as Record<string, number>;
    let records: StoredRecord[] = [];
    let kept: StoredOperationRecord[] = [];
    let ratings: StoredRating[] = [];
    let imported = 0;
    const flush = async (): Promise<void> => {
      if (records.length === 0 && kept.length === 0 && ratings.length === 0) return;
      const batchRecords = records;
      const batchKept = kept;
      const batchRatings = ratings;
      records = [];
      kept = [];
      ratings = [];
      const now = this.clock.now().toISOString();
      await this.storage.transaction(async (tx) => {
        await this.records.upsertRecords(tx, batchRecords, now);
        if (batchKept.length > 0) await this.records.upsertOperationRecords(tx, batchKept, now);
        await this.records.upsertRatings(tx, batchRatings, now);
      });
      this.afterWrite();
    };
    const summary = await this.scan(path, options, 'importing', async (line) => {
      const source = line.source ?? options.source;
      if (line.kind === 'rating') ratings.push({ ...line.rating, source });
      // An answer of the original answers its own operation only (kept-per-operation.ts).
      else if (keptPerOperation(source)) kept.push({ operation: line.operation, lookupKey: line.record.lookupKey, document: line.record.document, source });
      else records.push({ ...line.record, source });
      byOperation[line.operation] = (byOperation[line.operation] ?? 0) + 1;
      imported += 1;
      if (records.length + kept.length + ratings.length >= BATCH_SIZE) await flush();
    });
    await flush();
    return { linesRead: summary.linesRead, imported, invalid: summary.invalid, byOperation, committed: true };
  }

  private async scan(
    path: string,
    options: ImportOptions,
    phase: ImportPhase,
    handle: LineHandler | undefined,
  ): Promise<{ linesRead: number; invalid: number }> {
    options.signal?.throwIfAborted();
    options.onPhase?.(phase);
    const input = createReadStream(path, { encoding: 'utf8' });
    const lines = createInterface({ input, crlfDelay: Infinity });
    let lineNumber = 0;
    let invalid = 0;
    try {
      for await (const text of lines) {
        lineNumber += 1;
        if (lineNumber % PROGRESS_EVERY === 0) {
          options.signal?.throwIfAborted();
          options.onProgress?.(lineNumber, phase, input.bytesRead);
        }
        if (text.trim() === '') continue;
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (error) {
          invalid += 1;
          options.onInvalid?.(lineNumber, `not valid JSON (${error instanceof Error ? error.message : String(error)})`);
          continue;
        }
        const outcome = this.validator.validate(parsed);
        if (!outcome.ok) {
          invalid += 1;
          options.onInvalid?.(lineNumber, outcome.reason);
          continue;
        }
        if (handle) await handle(outcome.line);
      }
    } finally {
      lines.close();
      input.destroy();
    }
    options.onProgress?.(lineNumber, phase, input.bytesRead);
    return { linesRead: lineNumber, invalid };
  }
}
