import type { Clock } from '../shared/clock.js';
import type { UsageRow } from './ledger-queries.js';

const DAY_MS = 86_400_000;

/**
 * A UTC day counts as closed this long after its end. Ledger rows carry the clock time at which
 * they were written, and a group-committed batch (or an instance whose clock runs a little behind)
 * may commit rows stamped just before midnight a moment after it: 5 minutes covers both.
 */
export const CLOSED_DAY_GRACE_MS = 5 * 60_000;

/** Closed days kept: a year and more, far beyond the 30 days the overview shows; each day is a few rows per operation. */
export const CACHED_DAYS = 400;

/** The store's usage over every account (LedgerQueries.allAccountsUsage). */
export interface UsageSource {
  allAccountsUsage(from: string, to: string): Promise<UsageRow[]>;
}

/** A stretch of [from, to) that the store must read, and the whole closed days in it to keep. */
interface Fetch {
  readonly kind: 'fetch';
  readonly from: number;
  to: number;
  readonly closedDays: number[];
}

type Piece = { readonly kind: 'cached'; readonly rows: readonly UsageRow[] } | Fetch;

/**
 * Usage over every account for the operator overview (the console's and the admin API's), with
 * the totals of closed UTC days kept in process. The ledger is append-only and rows are stamped
 * with the time they were written, so once a day has ended (and CLOSED_DAY_GRACE_MS passed) its
 * totals no longer change: the overview asks for the same 30 days on every view, and only the
 * days not kept yet and the open day are read from the store (one query per contiguous stretch).
 * The answer is the store's answer, row for row (test/storage/all-accounts-usage.test.ts).
 * Each instance keeps its own: nothing to invalidate, as a closed day is the same everywhere.
 */
export class AllAccountsUsage {
  /** Closed days' rows by the day's start (epoch ms), least recently used first. */
  private readonly days = new Map<number, readonly UsageRow[]>();

  constructor(
    private readonly store: UsageSource,
    private readonly clock: Clock,
    private readonly options: { readonly graceMs?: number; readonly maxDays?: number } = {},
  ) {}

  /** Lookups (charged and free) and credits of every account by UTC day and operation in [from, to). */
  async usage(from: string, to: string): Promise<UsageRow[]> {
    const fromMs = Date.parse(from);
    const toMs = Date.parse(to);
    // Not a time the day arithmetic can split: the store answers it as it is.
    if (!Number.isFinite(fromMs) || !Number.isFinite(toMs)) return this.store.allAccountsUsage(from, to);
    const closedUntil = this.clock.now().getTime() - (this.options.graceMs ?? CLOSED_DAY_GRACE_MS);
    const pieces = this.plan(fromMs, toMs, closedUntil);
    // The given strings at the ends, so the stretches read together are exactly [from, to).
    const iso = (ms: number, edge: string, edgeMs: number) => (ms === edgeMs ? edge : new Date(ms).toISOString());
    const answers = await Promise.all(
      pieces.map(async (piece) => {
        if (piece.kind === 'cached') return piece.rows;
        const rows = await this.store.allAccountsUsage(iso(piece.from, from, fromMs), iso(piece.to, to, toMs));
        this.keep(piece.closedDays, rows);
        return rows;
      }),
    );
    return answers.flat();
  }

  /** [from, to) in time order: kept closed days, and stretches to read (adjacent ones merged). */
  private plan(fromMs: number, toMs: number, closedUntil: number): Piece[] {
    const pieces: Piece[] = [];
    const read = (start: number, end: number, closedDay?: number) => {
      const last = pieces.at(-1);
      const fetch: Fetch = last?.kind === 'fetch' && last.to === start ? last : { kind: 'fetch', from: start, to: start, closedDays: [] };
      if (fetch !== last) pieces.push(fetch);
      fetch.to = end;
      if (closedDay !== undefined) fetch.closedDays.push(closedDay);
    };
    for (let cursor = fromMs; cursor < toMs; ) {
      const dayStart = cursor - (((cursor % DAY_MS) + DAY_MS) % DAY_MS);
      const dayEnd = dayStart + DAY_MS;
      const end = Math.min(dayEnd, toMs);
      if (cursor === dayStart && end === dayEnd && dayEnd <= closedUntil) {
        const kept = this.days.get(dayStart);
        if (kept) {
          // Most recently used last: the Map's order is the eviction order.
          this.days.delete(dayStart);
          this.days.set(dayStart, kept);
          pieces.push({ kind: 'cached', rows: kept });
        } else {
          read(cursor, end, dayStart);
        }
      } else {
        // Part of a day, or a day still open: always from the store.
        read(cursor, end);
      }
      cursor = end;
    }
    return pieces;
  }

  /** Keeps each closed day's rows from a stretch's answer (a day without rows keeps an empty list). */
  private keep(closedDays: readonly number[], rows: readonly UsageRow[]): void {
    if (closedDays.length === 0) return;
    const byDay = new Map<number, UsageRow[]>(closedDays.map((day) => [day, []]));
    for (const row of rows) byDay.get(Date.parse(`${row.day}T00:00:00.000Z`))?.push(row);
    const max = this.options.maxDays ?? CACHED_DAYS;
    for (const [day, dayRows] of byDay) {
      this.days.delete(day);
      this.days.set(day, dayRows);
      while (this.days.size > max) {
        const oldest = this.days.keys().next();
        if (oldest.done === true) break;
        this.days.delete(oldest.value);
      }
    }
  }

  /** How many closed days are kept (tests). */
  get keptDays(): number {
    return this.days.size;
  }
}
