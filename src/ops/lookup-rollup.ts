import type { Storage } from '../storage/create-database.js';
import type { Tx } from '../storage/database.js';
import type { LookupStatRow } from './lookup-stats.repository.js';
import { unrefRepeat, type Repeat } from '../shared/repeat.js';

const HOUR_MS = 3_600_000;

/** The count of one series (interface, operation, outcome) in the current hour; resolve it once, then add to it. */
export interface RollupSlot {
  count: number;
}

interface Series {
  readonly interface: string;
  readonly operation: string;
  readonly outcome: string;
  readonly slot: RollupSlot;
}

/** Counts waiting for the store, most of them by default (a day of a few hundred series per hour). */
export const DEFAULT_MAX_PENDING_ROWS = 20_000;

const keyOf = (row: Omit<LookupStatRow, 'count'>): string => `${row.hour}\u0000${row.interface}\u0000${row.operation}\u0000${row.outcome}`;

/**
 * This process's finished lookups by UTC hour, interface, operation and outcome, in memory until
 * LookupRollup writes them to the store. Fed by Metrics.onLookup, where the lookups metric is fed:
 * a series' slot is resolved once (Metrics keeps it with the metric's own series), and counting a
 * lookup is a clock read, a comparison and a number addition, with no allocation and no await.
 * The hour turns over on the first lookup after it ends: the finished hour's counts are parked as
 * rows (once an hour, not per request).
 */
export class LookupCounts {
  private readonly slots = new Map<string, Series>();
  private hourStart = Number.NEGATIVE_INFINITY;
  private hourEnd = Number.NEGATIVE_INFINITY;
  /** Counts of finished hours and of failed writes, by row key. */
  private pending = new Map<string, { row: Omit<LookupStatRow, 'count'>; count: number }>();

  constructor(
    private readonly millis: () => number,
    private readonly maxPendingRows = DEFAULT_MAX_PENDING_ROWS,
  ) {}

  /** The slot of a series; keep it. Label values come from the metric's bounded label sets. */
  slot(operation: string, iface: string, outcome: string): RollupSlot {
    const key = `${iface}\u0000${operation}\u0000${outcome}`;
    let series = this.slots.get(key);
    if (!series) {
      series = { interface: iface, operation, outcome, slot: { count: 0 } };
      this.slots.set(key, series);
    }
    return series.slot;
  }

  /** Counts one lookup in the current hour (the hot path). */
  count(slot: RollupSlot): void {
    const now = this.millis();
    if (now >= this.hourEnd || now < this.hourStart) this.turnHour(now);
    slot.count += 1;
  }

  /** Parks the hour counted so far and starts the hour of `now`. */
  private turnHour(now: number): void {
    this.park();
    this.hourStart = now - (((now % HOUR_MS) + HOUR_MS) % HOUR_MS);
    this.hourEnd = this.hourStart + HOUR_MS;
  }

  /** Moves the slots' counts into pending rows of the current hour and zeroes them (the slots stay). */
  private park(): void {
    if (!Number.isFinite(this.hourStart)) return;
    const hour = new Date(this.hourStart).toISOString();
    for (const series of this.slots.values()) {
      if (series.slot.count === 0) continue;
      this.merge({ hour, interface: series.interface, operation: series.operation, outcome: series.outcome }, series.slot.count);
      series.slot.count = 0;
    }
  }

  private merge(row: Omit<LookupStatRow, 'count'>, count: number): void {
    const key = keyOf(row);
    const entry = this.pending.get(key);
    if (entry) entry.count += count;
    else this.pending.set(key, { row, count });
  }

  /** Everything counted and not yet written, as rows; the counts are handed over (zeroed here). */
  take(): LookupStatRow[] {
    this.park();
    const rows = [...this.pending.values()].map((e) => ({ ...e.row, count: e.count }));
    this.pending = new Map();
    return rows;
  }

  /**
   * Takes back rows a write failed to store, so the next flush carries them (merged with what was
   * counted meanwhile). Past `maxPendingRows` rows the oldest hours are dropped; answers how many
   * lookups that dropped.
   */
  restore(rows: readonly LookupStatRow[]): number {
    for (const row of rows) this.merge(row, row.count);
    if (this.pending.size <= this.maxPendingRows) return 0;
    const byAge = [...this.pending.entries()].sort((a, b) => a[1].row.hour.localeCompare(b[1].row.hour));
    let dropped = 0;
    for (const [key, entry] of byAge.slice(0, this.pending.size - this.maxPendingRows)) {
      dropped += entry.count;
      this.pending.delete(key);
    }
    return dropped;
  }

  /** Rows waiting (parked hours and failed writes), not counting the current hour's slots. */
  get pendingRows(): number {
    return this.pending.size;
  }
}

/** Where the rollup reports a failed write (the server's logger). */
export interface RollupLog {
  warn(message: string, details: { err: unknown; rows: number; droppedLookups: number }): void;
}

/** Counts kept in memory until a rollup writes them: LookupCounts, and the upstream spend (upstream-spend.ts). */
export interface RollupCounts<Row> {
  /** Everything counted and not yet written, as rows; the counts are handed over. */
  take(): Row[];
  /** Takes back rows a write failed to store; answers how many counts it had to drop. */
  restore(rows: readonly Row[]): number;
}

/** Where a rollup adds its rows: an additive upsert, so every instance's counts add up. */
export interface RollupStore<Row> {
  add(tx: Tx, rows: readonly Row[]): Promise<void>;
}

/**
 * Writes this process's LookupCounts (or other RollupCounts, such as the upstream spend) to the
 * store every `intervalMs` and when the app closes, so
 * the overview's success and error rates cover every instance behind a load balancer and every
 * worker of the cluster mode (the /metrics counters are per process). A write that fails keeps its
 * counts for the next one (up to the LookupCounts bound) and logs. Writes never overlap.
 */
export class LookupRollup<Row = LookupStatRow> {
  private stop: (() => void) | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    readonly counts: RollupCounts<Row>,
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly repository: RollupStore<Row>,
    private readonly intervalMs: number,
    private readonly log: RollupLog,
    /** The timer of the periodic writes; unrefRepeat never keeps the process alive (close() writes the last counts). */
    private readonly repeat: Repeat = unrefRepeat,
    /** What the counts are, for the log line of a failed write. */
    private readonly what = 'lookup statistics',
  ) {}

  start(): void {
    this.stop ??= this.repeat(this.intervalMs, () => {
      void this.flush();
    });
  }

  /** Writes what has been counted so far (after any write in progress). Never rejects. */
  flush(): Promise<void> {
    this.writing = this.writing.then(async () => {
      const rows = this.counts.take();
      if (rows.length === 0) return;
      try {
        await this.storage.transaction((tx) => this.repository.add(tx, rows));
      } catch (error) {
        const droppedLookups = this.counts.restore(rows);
        this.log.warn(`${this.what} not written; kept for the next flush`, { err: error, rows: rows.length, droppedLookups });
      }
    });
    return this.writing;
  }

  /** Stops the timer and writes the last counts (the app's onClose, before the store closes). */
  async close(): Promise<void> {
    this.stop?.();
    this.stop = undefined;
    await this.flush();
  }
}
