import { hostname } from 'node:os';
import type { Readable } from 'node:stream';
import { SYSTEM_ACTOR, type Actor, type AuditLog } from '../../audit/audit-log.js';
import type { Clock } from '../../shared/clock.js';
import type { Storage } from '../../storage/create-database.js';
import { ImportJobRepository, type ImportJob, type ImportOutcome, type ImportState, type InvalidLine } from './import-job.repository.js';
import type { ImportPhase, JsonlImporter } from './jsonl-importer.js';
import { receiveUpload, type Upload } from './upload-file.js';

export type { ImportJob, ImportState, InvalidLine } from './import-job.repository.js';

/** A refused import request; adapters map the code to their own answer (src/http/api/import.routes.ts). */
export class ImportJobError extends Error {
  override readonly name = 'ImportJobError';
  constructor(
    readonly code: 'NOT_FOUND' | 'CLOSED',
    message: string,
  ) {
    super(message);
  }
}

/** What the person uploading says about the file. */
export interface ImportRequest {
  /** Shown in the job list; the upload's own name where the client gave one. */
  readonly fileName: string;
  /** Recorded with every record, as the CLI's --source. */
  readonly source: string;
  /** Import the valid lines even when some are invalid, as the CLI's --skip-invalid. */
  readonly skipInvalid: boolean;
}

export interface ImportJobsOptions {
  /** The largest file accepted, in bytes (IMPORT_MAX_BYTES). */
  readonly maxBytes: number;
  /** Where uploads wait for their import; default the system's (TMPDIR). */
  readonly tempDir?: string | undefined;
  /** Names this process in the jobs it runs; default host:pid. */
  readonly instance?: string | undefined;
  /** Progress is written at most this often (and at each change of phase); default 1 s. */
  readonly progressIntervalMs?: number | undefined;
  /** How often this instance tells the store it still runs its jobs; default 5 s. */
  readonly heartbeatMs?: number | undefined;
  /** A job whose instance has not spoken for this long is abandoned; default 60 s. */
  readonly staleMs?: number | undefined;
  /** Invalid lines kept with a job for its report; the rest are only counted. Default 100. */
  readonly invalidLinesKept?: number | undefined;
  /** Where a failed write of progress, heartbeat or outcome is reported (the server's logger). */
  readonly log?: ((message: string, error: unknown) => void) | undefined;
}

/** The largest upload by default (IMPORT_MAX_BYTES): 1 GiB. */
export const DEFAULT_IMPORT_MAX_BYTES = 1024 * 1024 * 1024;

/** The largest IMPORT_MAX_BYTES accepted: 1 TiB. */
export const MAX_IMPORT_MAX_BYTES = 1024 ** 4;

/** The longest reason kept for an invalid line (a JSON parse error may quote the line). */
const REASON_LENGTH = 500;

interface Queued {
  readonly job: ImportJob;
  readonly upload: Upload;
  readonly actor: Actor;
}

/** The state a pass of the importer puts the job in. */
const STATE_OF_PHASE: Readonly<Record<ImportPhase, ImportState>> = { checking: 'validating', importing: 'importing' };

/**
 * Import jobs (issue 16): an uploaded JSON Lines file is kept in a temporary file, recorded as a
 * job with its audit row, and run by the same importer as the CLI (JsonlImporter: the same
 * validation, all-or-nothing unless skipInvalid), one job at a time per instance. Progress and
 * the validation report go to the store every `progressIntervalMs`, so every instance can show
 * them; a heartbeat marks the instance's jobs alive, and a job whose instance died is reported
 * failed (abandoned) once its heartbeat is `staleMs` old.
 */
export class ImportJobs {
  readonly maxBytes: number;
  private readonly repository: ImportJobRepository;
  private readonly instance: string;
  private readonly progressIntervalMs: number;
  private readonly heartbeatMs: number;
  private readonly staleMs: number;
  private readonly invalidLinesKept: number;
  private readonly queue: Queued[] = [];
  /** Jobs of this instance not finished yet (queued or running), for the heartbeat. */
  private readonly active = new Set<number>();
  private running: Promise<void> | undefined;
  /** Uploads being received now, settled or not (see `whenReceived`). */
  private readonly receiving = new Set<Promise<unknown>>();
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly storage: Storage,
    private readonly importer: JsonlImporter,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly options: ImportJobsOptions,
  ) {
    this.repository = new ImportJobRepository(storage.db);
    this.maxBytes = options.maxBytes;
    this.instance = options.instance ?? `${hostname()}:${process.pid}`;
    this.progressIntervalMs = options.progressIntervalMs ?? 1000;
    this.heartbeatMs = options.heartbeatMs ?? 5000;
    this.staleMs = options.staleMs ?? 60_000;
    this.invalidLinesKept = options.invalidLinesKept ?? 100;
  }

  /**
   * Streams an upload to a temporary file, refusing it past `maxBytes` (UploadError TOO_LARGE),
   * empty (EMPTY) or cut off (ABORTED); nothing is left on disk when it fails.
   */
  receive(body: Readable): Promise<Upload> {
    if (this.abort.signal.aborted) return Promise.reject(new ImportJobError('CLOSED', 'the server is shutting down; upload the file again in a moment'));
    const received = receiveUpload(body, this.maxBytes, this.options.tempDir);
    const settled = received.then(
      () => undefined,
      () => undefined,
    );
    this.receiving.add(settled);
    void settled.then(() => this.receiving.delete(settled));
    return received;
  }

  /**
   * Resolves when every upload being received now has been kept or refused, a refused one's
   * temporary file removed: what a client's disconnect leads to is only seen by the server, so
   * tests wait on this rather than on time.
   */
  async whenReceived(): Promise<void> {
    while (this.receiving.size > 0) await Promise.all(this.receiving);
  }

  /**
   * Records the job and its audit row in one transaction and queues it on this instance; the
   * upload is this service's from now on (removed when the job ends, or now if it cannot start).
   */
  async start(actor: Actor, upload: Upload, request: ImportRequest): Promise<ImportJob> {
    try {
      if (this.abort.signal.aborted) throw new ImportJobError('CLOSED', 'the server is shutting down; upload the file again in a moment');
      const now = this.now();
      const job = await this.storage.transaction(async (tx) => {
        const created = await this.repository.insert(tx, { actor, fileName: request.fileName, fileSize: upload.bytes, source: request.source, skipInvalid: request.skipInvalid, instance: this.instance }, now);
        await this.audit.record(tx, actor, {
          action: 'import.start',
          targetKind: 'import',
          target: String(created.id),
          after: { fileName: created.fileName, fileSize: created.fileSize, source: created.source, skipInvalid: created.skipInvalid },
        });
        return created;
      });
      this.queue.push({ job, upload, actor });
      this.active.add(job.id);
      this.startHeartbeat();
      this.running ??= this.drain();
      return job;
    } catch (error) {
      await upload.discard();
      throw error;
    }
  }

  /** One job, with its progress and validation report; abandoned jobs are reported as failed. */
  async get(id: number): Promise<ImportJob> {
    await this.reapAbandoned();
    const job = await this.repository.find(id);
    if (!job) throw new ImportJobError('NOT_FOUND', `no import ${id}`);
    return job;
  }

  /** The most recent jobs, newest first. */
  async list(limit: number): Promise<ImportJob[]> {
    await this.reapAbandoned();
    return this.repository.list(limit);
  }

  /** Resolves when this instance has no job queued or running (tests; shutdown). */
  async whenIdle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Stops: the running job ends at its next progress point (failed, with what it had committed
   * kept), queued jobs fail without starting, and every temporary file is removed.
   */
  async close(): Promise<void> {
    this.abort.abort(new ImportJobError('CLOSED', 'the server stopped during the import'));
    await this.whenIdle();
    this.stopHeartbeat();
  }

  private warn(message: string, error: unknown): void {
    this.options.log?.(message, error);
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  private async drain(): Promise<void> {
    try {
      for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
        try {
          await this.run(next);
        } catch (error) {
          // The store failed under the job (its start or its outcome could not be written). The
          // next jobs still run; this one is left to the abandoned-job sweep once its heartbeat,
          // stopped below, is old.
          this.warn(`import ${next.job.id}: could not record its start or outcome`, error);
        } finally {
          this.active.delete(next.job.id);
          await next.upload.discard();
        }
      }
    } finally {
      this.running = undefined;
      this.stopHeartbeat();
    }
  }

  private async run({ job, upload, actor }: Queued): Promise<void> {
    const invalidLines: InvalidLine[] = [];
    const progress = { state: (job.skipInvalid ? 'importing' : 'validating') as ImportState, bytesRead: 0, linesRead: 0, invalid: 0, invalidLines };
    let outcome: ImportOutcome;
    if (this.abort.signal.aborted) {
      outcome = { ...progress, imported: 0, committed: false, byOperation: {}, error: 'the server stopped before the import started; upload the file again' };
    } else {
      await this.repository.markStarted(job.id, progress.state, this.now());
      // Progress writes are chained so they land in order, and never awaited by the importer: a
      // slow store slows the report, not the import. A failed write is retried by the next one.
      let writes: Promise<void> = Promise.resolve();
      let lastWrite = Date.now();
      const write = (force: boolean): void => {
        if (!force && Date.now() - lastWrite < this.progressIntervalMs) return;
        lastWrite = Date.now();
        const snapshot = { ...progress, invalidLines: [...invalidLines] };
        writes = writes
          .then(() => this.repository.progress(job.id, snapshot, this.now()))
          .catch((error: unknown) => {
            this.warn(`import ${job.id}: could not record its progress`, error);
          });
      };
      try {
        const summary = await this.importer.importFile(upload.path, {
          skipInvalid: job.skipInvalid,
          source: job.source,
          signal: this.abort.signal,
          onPhase: (phase) => {
            progress.state = STATE_OF_PHASE[phase];
            progress.bytesRead = 0;
            progress.linesRead = 0;
            write(true);
          },
          onProgress: (lines, _phase, bytes) => {
            progress.linesRead = lines;
            progress.bytesRead = Math.min(bytes, upload.bytes);
            write(false);
          },
          onInvalid: (line, reason) => {
            progress.invalid += 1;
            if (invalidLines.length < this.invalidLinesKept) invalidLines.push({ line, reason: reason.length > REASON_LENGTH ? `${reason.slice(0, REASON_LENGTH - 1)}…` : reason });
          },
        });
        outcome = {
          ...progress,
          invalid: summary.invalid,
          linesRead: summary.linesRead,
          imported: summary.imported,
          committed: summary.committed,
          byOperation: summary.byOperation,
          error: summary.committed
            ? null
            : `${summary.invalid} invalid line${summary.invalid === 1 ? '' : 's'}: nothing imported (fix ${summary.invalid === 1 ? 'it' : 'them'}, or import with skipInvalid to import the valid lines)`,
        };
      } catch (error) {
        const stopped = error instanceof ImportJobError && error.code === 'CLOSED';
        const message = stopped
          ? 'the server stopped during the import; the batches written before it stopped are kept (upload the file again: re-importing replaces)'
          : `the import failed: ${error instanceof Error ? error.message : String(error)}`;
        outcome = { ...progress, imported: 0, committed: false, byOperation: {}, error: message.slice(0, 1000) };
      }
      await writes;
    }
    const state: ImportState = outcome.committed ? 'done' : 'failed';
    await this.storage.transaction(async (tx) => {
      const finished = await this.repository.finish(tx, job.id, { ...outcome, state, invalidLines: [...outcome.invalidLines] }, this.now());
      if (!finished) return;
      await this.audit.record(tx, actor, {
        action: 'import.finish',
        targetKind: 'import',
        target: String(job.id),
        after: { state, fileName: job.fileName, linesRead: finished.linesRead, imported: finished.imported, invalid: finished.invalid, committed: finished.committed, byOperation: finished.byOperation },
      });
    });
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      this.repository.heartbeat([...this.active], this.now()).catch((error: unknown) => {
        this.warn('import jobs: could not record the heartbeat', error);
      });
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.active.size > 0 || !this.heartbeat) return;
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /**
   * Marks failed the unfinished jobs whose instance stopped speaking (it died or lost the store):
   * each in a transaction with its audit row, and only if its heartbeat is still old then, so a
   * job whose instance just spoke is left alone. Jobs of this instance are alive by definition.
   */
  private async reapAbandoned(): Promise<void> {
    const cutoff = new Date(this.clock.now().getTime() - this.staleMs).toISOString();
    for (const { id, heartbeatAt } of await this.repository.stale(cutoff)) {
      if (this.active.has(id)) continue;
      const error = `abandoned: the instance running it stopped (last heard from at ${heartbeatAt}); the batches written before it stopped are kept (upload the file again: re-importing replaces)`;
      await this.storage.transaction(async (tx) => {
        if (await this.repository.abandon(tx, id, cutoff, error, this.now())) {
          await this.audit.record(tx, SYSTEM_ACTOR, { action: 'import.abandon', targetKind: 'import', target: String(id), after: { state: 'failed', lastHeartbeat: heartbeatAt } });
        }
      });
    }
  }
}
