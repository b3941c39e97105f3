import type { Selectable } from 'kysely';
import type { Actor } from '../../audit/audit-log.js';
import type { Db, ImportsTable, Tx } from '../../storage/database.js';

/** Where an import job is: waiting on its instance, checking every line, writing, or finished. */
export type ImportState = ImportsTable['state'];

/** The states of a job that has not finished yet (its instance keeps its heartbeat fresh). */
export const ACTIVE_STATES: readonly ImportState[] = ['queued', 'validating', 'importing'];

/** One invalid line of the file: its number (counting every line, blank ones included) and why. */
export interface InvalidLine {
  readonly line: number;
  readonly reason: string;
}

/** An import job as the store holds it (issue 16). */
export interface ImportJob {
  readonly id: number;
  readonly state: ImportState;
  readonly startedBy: { readonly kind: Actor['kind']; readonly name: string };
  readonly fileName: string;
  /** Bytes received. */
  readonly fileSize: number;
  readonly source: string;
  readonly skipInvalid: boolean;
  /** Bytes of the file read by the current pass (the progress within it). */
  readonly bytesRead: number;
  /** Lines read by the current pass; after the last pass, the file's lines. */
  readonly linesRead: number;
  readonly imported: number;
  readonly invalid: number;
  /** Whether the file was written (false when invalid lines stopped an all-or-nothing import). */
  readonly committed: boolean;
  readonly byOperation: Readonly<Record<string, number>>;
  /** The first invalid lines (up to the service's limit); `invalid` counts them all. */
  readonly invalidLines: readonly InvalidLine[];
  readonly error: string | null;
  /** The instance (host:pid) that received the file and runs the job. */
  readonly instance: string;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly heartbeatAt: string;
}

/** What a job's instance writes as it goes. */
export interface ImportProgress {
  readonly state: ImportState;
  readonly bytesRead: number;
  readonly linesRead: number;
  readonly invalid: number;
  readonly invalidLines: readonly InvalidLine[];
}

/** What a finished job records. */
export interface ImportOutcome extends ImportProgress {
  readonly imported: number;
  readonly committed: boolean;
  readonly byOperation: Readonly<Record<string, number>>;
  readonly error: string | null;
}

export interface NewImportJob {
  readonly actor: Actor;
  readonly fileName: string;
  readonly fileSize: number;
  readonly source: string;
  readonly skipInvalid: boolean;
  readonly instance: string;
}

/** bigint columns arrive as numbers on both engines (create-database.ts parses PostgreSQL's int8). */
function toJob(row: Selectable<ImportsTable>): ImportJob {
  return {
    id: row.id,
    state: row.state,
    startedBy: { kind: row.actor_kind as Actor['kind'], name: row.actor },
    fileName: row.file_name,
    fileSize: row.file_size,
    source: row.source,
    skipInvalid: row.skip_invalid === 1,
    bytesRead: row.bytes_read,
    linesRead: row.lines_read,
    imported: row.imported,
    invalid: row.invalid,
    committed: row.committed === 1,
    byOperation: JSON.parse(row.by_operation) as Record<string, number>,
    invalidLines: JSON.parse(row.invalid_lines) as InvalidLine[],
    error: row.error,
    instance: row.instance,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    heartbeatAt: row.heartbeat_at,
  };
}

function progressColumns(progress: ImportProgress) {
  return {
    state: progress.state,
    bytes_read: progress.bytesRead,
    lines_read: progress.linesRead,
    invalid: progress.invalid,
    invalid_lines: JSON.stringify(progress.invalidLines),
  };
}

/** The `imports` table (migration 0009). */
export class ImportJobRepository {
  constructor(private readonly db: Db) {}

  async insert(tx: Tx, job: NewImportJob, now: string): Promise<ImportJob> {
    const row = await tx.db
      .insertInto('imports')
      .values({
        actor_kind: job.actor.kind,
        actor: job.actor.name,
        file_name: job.fileName,
        file_size: job.fileSize,
        source: job.source,
        skip_invalid: job.skipInvalid ? 1 : 0,
        state: 'queued',
        instance: job.instance,
        created_at: now,
        heartbeat_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toJob(row);
  }

  async find(id: number): Promise<ImportJob | undefined> {
    const row = await this.db.selectFrom('imports').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  /** Newest first. */
  async list(limit: number): Promise<ImportJob[]> {
    const rows = await this.db.selectFrom('imports').selectAll().orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toJob);
  }

  async markStarted(id: number, state: ImportState, now: string): Promise<void> {
    await this.db.updateTable('imports').set({ state, started_at: now, heartbeat_at: now }).where('id', '=', id).execute();
  }

  /** Progress of a running job; also its heartbeat. Never moves a finished job back. */
  async progress(id: number, progress: ImportProgress, now: string): Promise<void> {
    await this.db
      .updateTable('imports')
      .set({ ...progressColumns(progress), heartbeat_at: now })
      .where('id', '=', id)
      .where('state', 'in', ACTIVE_STATES)
      .execute();
  }

  async finish(tx: Tx, id: number, outcome: ImportOutcome, now: string): Promise<ImportJob | undefined> {
    const row = await tx.db
      .updateTable('imports')
      .set({
        ...progressColumns(outcome),
        imported: outcome.imported,
        committed: outcome.committed ? 1 : 0,
        by_operation: JSON.stringify(outcome.byOperation),
        error: outcome.error,
        finished_at: now,
        heartbeat_at: now,
      })
      .where('id', '=', id)
      .where('state', 'in', ACTIVE_STATES)
      .returningAll()
      .executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  /** This instance is alive and still has these jobs. */
  async heartbeat(ids: readonly number[], now: string): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('imports').set({ heartbeat_at: now }).where('id', 'in', ids).where('state', 'in', ACTIVE_STATES).execute();
  }

  /** Unfinished jobs whose heartbeat is older than `cutoff`. */
  async stale(cutoff: string): Promise<Array<{ id: number; heartbeatAt: string }>> {
    const rows = await this.db.selectFrom('imports').select(['id', 'heartbeat_at']).where('state', 'in', ACTIVE_STATES).where('heartbeat_at', '<', cutoff).execute();
    return rows.map((r) => ({ id: r.id, heartbeatAt: r.heartbeat_at }));
  }

  /** Marks a stale job failed, unless its instance spoke since `cutoff` or it finished; true when it did. */
  async abandon(tx: Tx, id: number, cutoff: string, error: string, now: string): Promise<boolean> {
    const result = await tx.db
      .updateTable('imports')
      .set({ state: 'failed', error, finished_at: now })
      .where('id', '=', id)
      .where('state', 'in', ACTIVE_STATES)
      .where('heartbeat_at', '<', cutoff)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
