import { sql } from 'kysely';
import type { Clock } from '../shared/clock.js';
import type { Storage } from '../storage/create-database.js';
import type { ThrottleCounters, WindowCount } from './login-throttle.js';

/** How often an instance deletes the rows whose window has ended. */
const PRUNE_EVERY_MS = 60_000;

/**
 * Throttle counts in the store's `login_throttle` table (migration 0010): failed logins without
 * Redis, shared by every instance on one database (several instances on one PostgreSQL, or the
 * processes of one host on one SQLite file). Each count is one upsert, atomic on both engines: a
 * row whose window ended starts again at 1 in the same statement, so two instances counting at
 * once never both start a window or lose an attempt. Rows of ended windows are deleted at most
 * once a minute per instance.
 */
export class StoreThrottleCounters implements ThrottleCounters {
  private nextPruneAt = 0;
  /** The longest window counted, so pruning never deletes a running one. */
  private longestWindowMs = 0;

  constructor(
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly clock: Clock,
  ) {}

  async add(key: string, windowMs: number): Promise<WindowCount> {
    const now = this.clock.now().getTime();
    const startedAt = new Date(now).toISOString();
    // A window that started at or before this moment has ended.
    const endedIfStartedBy = new Date(now - windowMs).toISOString();
    this.longestWindowMs = Math.max(this.longestWindowMs, windowMs);
    const row = await this.storage.transaction(async (tx) => {
      if (now >= this.nextPruneAt) {
        this.nextPruneAt = now + PRUNE_EVERY_MS;
        await tx.db.deleteFrom('login_throttle').where('window_started_at', '<=', new Date(now - this.longestWindowMs).toISOString()).execute();
      }
      const ended = sql<boolean>`${sql.ref('login_throttle.window_started_at')} <= ${endedIfStartedBy}`;
      return tx.db
        .insertInto('login_throttle')
        .values({ subject: key, attempts: 1, window_started_at: startedAt })
        .onConflict((oc) =>
          oc.column('subject').doUpdateSet({
            attempts: sql<number>`case when ${ended} then 1 else ${sql.ref('login_throttle.attempts')} + 1 end`,
            window_started_at: sql<string>`case when ${ended} then ${startedAt} else ${sql.ref('login_throttle.window_started_at')} end`,
          }),
        )
        .returning(['attempts', 'window_started_at'])
        .executeTakeFirstOrThrow();
    });
    return { count: row.attempts, endsInMs: Date.parse(row.window_started_at) + windowMs - now };
  }

  async subtract(key: string): Promise<void> {
    // An ended window's row may go down too: the next count starts it again at 1 anyway.
    await this.storage.transaction((tx) =>
      tx.db
        .updateTable('login_throttle')
        .set({ attempts: sql<number>`${sql.ref('attempts')} - 1` })
        .where('subject', '=', key)
        .where('attempts', '>', 0)
        .execute(),
    );
  }

  async clear(key: string): Promise<void> {
    await this.storage.transaction((tx) => tx.db.deleteFrom('login_throttle').where('subject', '=', key).execute());
  }
}
