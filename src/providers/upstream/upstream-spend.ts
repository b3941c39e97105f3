import type { RollupCounts, RollupStore } from '../../ops/lookup-rollup.js';
import type { Db, Tx } from '../../storage/database.js';
import type { UpstreamEvent, UpstreamMonitor } from './upstream-monitor.js';

/** Calls and cache answers of one UTC day, provider, operation and outcome (an upstream_stats row, or counts to add to one). */
export interface UpstreamSpendRow {
  /** `YYYY-MM-DD`, UTC. */
  readonly day: string;
  readonly provider: string;
  /** The operation asked; empty where the source does not name it. */
  readonly operation: string;
  readonly outcome: SpendOutcome;
  readonly count: number;
}

/** A lookup that asked the upstream (`found`, `not_found`, `failed`) or that the cache answered instead. */
export type SpendOutcome = 'found' | 'not_found' | 'failed' | 'cache_found' | 'cache_not_found';

/** Calls of one provider that cost (the upstream asked) and calls the cache saved. */
export interface SpendTotals {
  /** Lookups that asked the upstream, whatever it answered. */
  readonly calls: number;
  /** Of those, answers with data (what a paid upstream such as the original charges for). */
  readonly found: number;
  readonly notFound: number;
  readonly failed: number;
  /** Lookups the cache answered instead of the upstream. */
  readonly servedFromCache: number;
  /** Of those, answers with data: the credits the cache saved at a paid upstream. */
  readonly creditsSaved: number;
}

/** What `GET /admin/api/providers` and the console show per provider. */
export interface ProviderSpend {
  readonly today: SpendTotals;
  /** The last 30 UTC days, today included. */
  readonly last30Days: SpendTotals;
  /** The 30 days by operation, busiest first. */
  readonly byOperation: ReadonlyArray<{ readonly operation: string } & SpendTotals>;
}

const DAY_MS = 86_400_000;
/** Rows per INSERT: 5 parameters each, well under SQLite's 32,766 and PostgreSQL's 65,535. */
const CHUNK = 1000;
/** Counts waiting for the store at most (a failing store for days, every operation and outcome). */
const MAX_PENDING_ROWS = 20_000;

/** The outcome a finished upstream lookup counts under, or undefined for one that neither called nor used the cache (circuit open, gate closed). */
function outcomeOf(event: Extract<UpstreamEvent, { type: 'answer' }>): SpendOutcome | undefined {
  if (event.via === 'upstream') return event.answer === 'found' ? 'found' : event.answer === 'not-found' ? 'not_found' : 'failed';
  if (event.via === 'cache') return event.answer === 'found' ? 'cache_found' : 'cache_not_found';
  return undefined;
}

const keyOf = (row: Omit<UpstreamSpendRow, 'count'>): string => `${row.day}\u0000${row.provider}\u0000${row.operation}\u0000${row.outcome}`;

/**
 * This process's upstream spend by UTC day, provider, operation and outcome, counted from the
 * monitor's answer events (every upstream source reports them: UpstreamSource) and kept in memory
 * until the rollup (LookupRollup) adds them to the store, so a lookup never waits for a write and
 * every instance's calls add up. Upstream calls are network round trips, rare next to lookups, so
 * a map lookup per event is all the counting costs.
 */
export class UpstreamSpendCounts implements RollupCounts<UpstreamSpendRow> {
  private pending = new Map<string, { row: Omit<UpstreamSpendRow, 'count'>; count: number }>();

  constructor(private readonly millis: () => number) {}

  /** Counts every answer event of `monitor` from now on. */
  listenTo(monitor: UpstreamMonitor): this {
    monitor.subscribe((event) => {
      if (event.type !== 'answer') return;
      const outcome = outcomeOf(event);
      if (outcome !== undefined) this.count(event.provider, event.operation ?? '', outcome);
    });
    return this;
  }

  count(provider: string, operation: string, outcome: SpendOutcome, count = 1): void {
    const day = new Date(this.millis()).toISOString().slice(0, 10);
    this.merge({ day, provider, operation, outcome }, count);
  }

  private merge(row: Omit<UpstreamSpendRow, 'count'>, count: number): void {
    const key = keyOf(row);
    const entry = this.pending.get(key);
    if (entry) entry.count += count;
    else this.pending.set(key, { row, count });
  }

  take(): UpstreamSpendRow[] {
    const rows = [...this.pending.values()].map((e) => ({ ...e.row, count: e.count }));
    this.pending = new Map();
    return rows;
  }

  /** Takes back rows a write failed to store; past MAX_PENDING_ROWS the oldest days go, and the counts they held are answered. */
  restore(rows: readonly UpstreamSpendRow[]): number {
    for (const row of rows) this.merge(row, row.count);
    if (this.pending.size <= MAX_PENDING_ROWS) return 0;
    const byAge = [...this.pending.entries()].sort((a, b) => a[1].row.day.localeCompare(b[1].row.day));
    let dropped = 0;
    for (const [key, entry] of byAge.slice(0, this.pending.size - MAX_PENDING_ROWS)) {
      dropped += entry.count;
      this.pending.delete(key);
    }
    return dropped;
  }
}

const emptyTotals = (): { -readonly [K in keyof SpendTotals]: number } => ({ calls: 0, found: 0, notFound: 0, failed: 0, servedFromCache: 0, creditsSaved: 0 });

function addTo(totals: { -readonly [K in keyof SpendTotals]: number }, outcome: string, count: number): void {
  switch (outcome as SpendOutcome) {
    case 'found':
      totals.calls += count;
      totals.found += count;
      return;
    case 'not_found':
      totals.calls += count;
      totals.notFound += count;
      return;
    case 'failed':
      totals.calls += count;
      totals.failed += count;
      return;
    case 'cache_found':
      totals.servedFromCache += count;
      totals.creditsSaved += count;
      return;
    case 'cache_not_found':
      totals.servedFromCache += count;
      return;
  }
}

/** The store side of the upstream spend (migration 0012): every instance adds, anyone reads the sums. */
export class UpstreamSpendRepository implements RollupStore<UpstreamSpendRow> {
  constructor(private readonly db: Db) {}

  /**
   * Adds counts to their rows (an additive upsert: instances flushing at once both count). Rows go
   * in key order, so two instances updating the same rows take PostgreSQL's row locks in the same
   * order and cannot deadlock.
   */
  async add(tx: Tx, rows: readonly UpstreamSpendRow[]): Promise<void> {
    const sorted = [...rows].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
    for (let i = 0; i < sorted.length; i += CHUNK) {
      await tx.db
        .insertInto('upstream_stats')
        .values(sorted.slice(i, i + CHUNK).map((r) => ({ day: r.day, provider: r.provider, operation: r.operation, outcome: r.outcome, count: r.count })))
        .onConflict((oc) => oc.columns(['day', 'provider', 'operation', 'outcome']).doUpdateSet((eb) => ({ count: eb('upstream_stats.count', '+', eb.ref('excluded.count')) })))
        .execute();
    }
  }

  /** Each provider's spend today and over the 30 UTC days ending with `now`'s, every instance summed. */
  async spend(now: Date): Promise<Record<string, ProviderSpend>> {
    const today = now.toISOString().slice(0, 10);
    const from = new Date(Date.parse(today) - 29 * DAY_MS).toISOString().slice(0, 10);
    const rows = await this.db
      .selectFrom('upstream_stats')
      .select(['day', 'provider', 'operation', 'outcome', 'count'])
      .where('day', '>=', from)
      .where('day', '<=', today)
      .execute();
    const by = new Map<string, { today: ReturnType<typeof emptyTotals>; last30Days: ReturnType<typeof emptyTotals>; ops: Map<string, ReturnType<typeof emptyTotals>> }>();
    for (const row of rows) {
      let entry = by.get(row.provider);
      if (!entry) {
        entry = { today: emptyTotals(), last30Days: emptyTotals(), ops: new Map() };
        by.set(row.provider, entry);
      }
      const { count } = row;
      addTo(entry.last30Days, row.outcome, count);
      if (row.day === today) addTo(entry.today, row.outcome, count);
      let op = entry.ops.get(row.operation);
      if (!op) {
        op = emptyTotals();
        entry.ops.set(row.operation, op);
      }
      addTo(op, row.outcome, count);
    }
    const out: Record<string, ProviderSpend> = {};
    for (const [provider, e] of [...by].sort(([a], [b]) => a.localeCompare(b))) {
      out[provider] = {
        today: e.today,
        last30Days: e.last30Days,
        byOperation: [...e.ops]
          .map(([operation, totals]) => ({ operation, ...totals }))
          .sort((a, b) => b.calls + b.servedFromCache - (a.calls + a.servedFromCache) || a.operation.localeCompare(b.operation)),
      };
    }
    return out;
  }
}
