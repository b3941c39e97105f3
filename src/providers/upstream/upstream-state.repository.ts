import { sql, type ExpressionBuilder } from 'kysely';
import type { DatabaseSchema, Db } from '../../storage/database.js';

/** Why a paid upstream is out for every instance (upstream_states.state). */
export type SharedOutState = 'out-of-funds' | 'quota' | 'disabled';

/** A paid upstream taken out, as the store holds it for every instance. */
export interface StoredOutState {
  readonly state: SharedOutState;
  readonly reason: string;
  /** When it may be asked again (ISO 8601); null: until a balance says otherwise, or (disabled) for good. */
  readonly until: string | null;
  readonly changedAt: string;
}

/** Millionths of the currency per unit: spend is added as whole numbers, so sums are exact. */
export const MICROS = 1_000_000;

/** An amount of money as whole millionths (0.1 -> 100000): rounding here, once, keeps every sum exact. */
export function toMicros(amount: number): number {
  return Math.round(amount * MICROS);
}

/** Spend at one paid upstream over a range of UTC days, every instance summed. */
export interface SpendSum {
  /** In the currency (UPSTREAM_CURRENCY), exact to a millionth. */
  readonly spent: number;
  /** Calls that cost it. */
  readonly calls: number;
}

/**
 * The state the router shares between instances (migration 0018): which paid upstreams are out and
 * why (upstream_states), and what each has cost per UTC day (upstream_spend). Read before each call
 * to a paid upstream (one statement: a primary-key read and a range of at most 31 rows; gateState), written when an answer
 * says so: nothing here runs on a lookup the caches answer.
 */
export class UpstreamStateRepository {
  constructor(private readonly db: Db) {}

  /** The provider's stored out state, or undefined when it is in. */
  async state(provider: string): Promise<StoredOutState | undefined> {
    const row = await this.db.selectFrom('upstream_states').select(['state', 'reason', 'until', 'changed_at']).where('provider', '=', provider).executeTakeFirst();
    return row ? { state: row.state as SharedOutState, reason: row.reason, until: row.until, changedAt: row.changed_at } : undefined;
  }

  /** Takes the provider out for every instance (the last writer's reason stands). */
  async takeOut(provider: string, out: StoredOutState): Promise<void> {
    await this.db
      .insertInto('upstream_states')
      .values({ provider, state: out.state, reason: out.reason, until: out.until, changed_at: out.changedAt })
      .onConflict((oc) => oc.column('provider').doUpdateSet({ state: out.state, reason: out.reason, until: out.until, changed_at: out.changedAt }))
      .execute();
  }

  /**
   * Brings the provider back, unless it is in one of `keep` (a refused key is not undone by an
   * answer of another instance that still had a call in flight). Answers whether a row went.
   */
  async bringBack(provider: string, keep: readonly SharedOutState[] = []): Promise<boolean> {
    let query = this.db.deleteFrom('upstream_states').where('provider', '=', provider);
    if (keep.length > 0) query = query.where('state', 'not in', keep);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Adds one call's cost to its UTC day (an additive upsert: instances adding at once both count). */
  async addSpend(provider: string, day: string, micros: number): Promise<void> {
    await this.db
      .insertInto('upstream_spend')
      .values({ provider, day, spent_micros: micros, calls: 1 })
      .onConflict((oc) =>
        oc.columns(['provider', 'day']).doUpdateSet((eb) => ({
          spent_micros: eb('upstream_spend.spent_micros', '+', eb.ref('excluded.spent_micros')),
          calls: eb('upstream_spend.calls', '+', eb.ref('excluded.calls')),
        })),
      )
      .execute();
  }

  /**
   * What the router's gate reads before a paid call, in one statement: the stored out state and the
   * spend from UTC day `from` to `to` (the month so far).
   */
  async gateState(provider: string, from: string, to: string): Promise<{ readonly out: StoredOutState | undefined; readonly spent: SpendSum }> {
    const state = (column: 'state' | 'reason' | 'until' | 'changed_at') => (eb: ExpressionBuilder<DatabaseSchema, 'upstream_spend'>) =>
      eb.selectFrom('upstream_states').select(column).where('provider', '=', provider);
    const row = await this.db
      .selectFrom('upstream_spend')
      .select((eb) => [
        sql<string | number | null>`sum(spent_micros)`.as('micros'),
        sql<string | number | null>`sum(calls)`.as('calls'),
        state('state')(eb).as('state'),
        state('reason')(eb).as('reason'),
        state('until')(eb).as('until'),
        state('changed_at')(eb).as('changed_at'),
      ])
      .where('provider', '=', provider)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .executeTakeFirst();
    const out =
      row?.state !== undefined && row.state !== null && row.reason !== null && row.changed_at !== null
        ? { state: row.state as SharedOutState, reason: row.reason, until: row.until ?? null, changedAt: row.changed_at }
        : undefined;
    return { out, spent: sumOf(row) };
  }

  /** The provider's spend from UTC day `from` to `to` (inclusive, `YYYY-MM-DD`). */
  async spend(provider: string, from: string, to: string): Promise<SpendSum> {
    const row = await this.db
      .selectFrom('upstream_spend')
      .select([sql<string | number | null>`sum(spent_micros)`.as('micros'), sql<string | number | null>`sum(calls)`.as('calls')])
      .where('provider', '=', provider)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .executeTakeFirst();
    return sumOf(row);
  }
}

/** A spend sum as read: PostgreSQL answers sum(bigint) as numeric text, SQLite as a number. */
function sumOf(row: { readonly micros: string | number | null; readonly calls: string | number | null } | undefined): SpendSum {
  return { spent: Number(row?.micros ?? 0) / MICROS, calls: Number(row?.calls ?? 0) };
}
