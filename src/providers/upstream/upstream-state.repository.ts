import { sql } from 'kysely';
import type { Db } from '../../storage/database.js';

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
 * to a paid upstream (one primary-key read and one range of at most 31 rows), written when an answer
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

  /** The provider's spend from UTC day `from` to `to` (inclusive, `YYYY-MM-DD`). */
  async spend(provider: string, from: string, to: string): Promise<SpendSum> {
    const row = await this.db
      .selectFrom('upstream_spend')
      .select([sql<string | number | null>`sum(spent_micros)`.as('micros'), sql<string | number | null>`sum(calls)`.as('calls')])
      .where('provider', '=', provider)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .executeTakeFirst();
    // PostgreSQL answers sum(bigint) as numeric text, SQLite as a number.
    return { spent: Number(row?.micros ?? 0) / MICROS, calls: Number(row?.calls ?? 0) };
  }
}
