import type { RdwFile, RdwProgress, RdwSourceOptions, RdwSourceSummary } from './rdw-row-source.js';

/** What the reader worker is started with. */
export interface RdwReaderData extends RdwSourceOptions {
  /** The worker's module, for src/shared/ts-worker-boot.js. */
  readonly entry: string;
}

/** Messages from the reader worker to the importer. */
export type RdwReaderMessage =
  | { readonly type: 'invalid'; readonly file: RdwFile; readonly line: number; readonly reason: string }
  | { readonly type: 'progress'; readonly progress: RdwProgress }
  /**
   * A batch of rows: keys and documents each joined with "\n" (neither can contain one: keys are
   * letters and digits, documents are JSON text, which escapes line breaks). One string apiece
   * crosses the thread boundary as one copy instead of SINK_ROWS cloned values.
   */
  | { readonly type: 'rows'; readonly keys: string; readonly documents: string }
  | { readonly type: 'done'; readonly summary: RdwSourceSummary }
  | { readonly type: 'failed'; readonly name: string; readonly message: string; readonly code?: string | undefined; readonly path?: string | undefined };

/**
 * Messages from the importer to the reader worker: a batch of rows was taken (into the run of rows
 * the writer sorts, RdwCsvImporter), or the import is over (the writer failed) and the reader
 * must clean up (delete its fuel index) and report.
 */
export type RdwReaderAck = { readonly type: 'taken' } | { readonly type: 'stop' };

/**
 * Batches the reader may send ahead of the writer (4,000 rows of SINK_ROWS, rdw-row-source.ts);
 * with the writer's run of SORTED_ROWS (rdw-csv-importer.ts), what bounds memory between the
 * threads.
 */
export const BATCHES_IN_FLIGHT = 40;

/**
 * Counts batches handed over and not yet taken by the writer: acquire() waits while
 * BATCHES_IN_FLIGHT are out, release() is called when one has been taken.
 */
export class InFlightLimit {
  private out = 0;
  private waiting: Array<() => void> = [];
  private stopped: Error | undefined;

  async acquire(): Promise<void> {
    while (this.out >= BATCHES_IN_FLIGHT && !this.stopped) {
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
      });
    }
    if (this.stopped) throw this.stopped;
    this.out += 1;
  }

  release(): void {
    this.out -= 1;
    this.wakeAll();
  }

  /** No more batches will be taken: a waiting or later acquire(), and check(), throw `reason`. */
  stop(reason: Error): void {
    this.stopped = reason;
    this.wakeAll();
  }

  /** Throws once stopped; the reader calls it as it reports, so it stops between rows too. */
  check(): void {
    if (this.stopped) throw this.stopped;
  }

  private wakeAll(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }
}
