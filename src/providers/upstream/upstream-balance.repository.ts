import type { Db } from '../../storage/database.js';

/** The balance at a paid upstream as the store holds it for every instance. */
export interface StoredBalance {
  readonly credits: number;
  /** When an instance last read it from the upstream (ISO 8601, UTC). */
  readonly readAt: string;
}

/**
 * The operator's balance at a paid upstream, one row per provider shared by every instance on the
 * store (upstream_balances, migration 0015; UpstreamBalanceWatch.shared). Nothing here runs on a
 * lookup the caches answer: it is written after a read of the upstream's balance and after an
 * answer the upstream charged, and read before asking the upstream.
 */
export class UpstreamBalanceRepository {
  constructor(private readonly db: Db) {}

  /** Stores a balance read from the upstream at `readAt`, unless a later read is already stored. */
  async publish(provider: string, credits: number, readAt: string): Promise<void> {
    await this.db
      .insertInto('upstream_balances')
      .values({ provider, credits, read_at: readAt })
      .onConflict((oc) =>
        oc
          .column('provider')
          .doUpdateSet((eb) => ({ credits: eb.ref('excluded.credits'), read_at: eb.ref('excluded.read_at') }))
          .where((eb) => eb('upstream_balances.read_at', '<=', eb.ref('excluded.read_at'))),
      )
      .execute();
  }

  /**
   * One credit spent at the upstream, by whichever instance: the stored balance less one (never
   * below 0), in one conditional update. Answers the balance after it, or undefined when none is
   * stored yet.
   */
  async countDown(provider: string): Promise<number | undefined> {
    const row = await this.db
      .updateTable('upstream_balances')
      .set((eb) => ({ credits: eb('credits', '-', 1) }))
      .where('provider', '=', provider)
      .where('credits', '>', 0)
      .returning('credits')
      .executeTakeFirst();
    return row ? row.credits : (await this.latest(provider))?.credits;
  }

  /** The stored balance, or undefined before any instance read it. */
  async latest(provider: string): Promise<StoredBalance | undefined> {
    const row = await this.db.selectFrom('upstream_balances').select(['credits', 'read_at']).where('provider', '=', provider).executeTakeFirst();
    return row ? { credits: row.credits, readAt: row.read_at } : undefined;
  }
}
