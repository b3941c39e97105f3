import type { Db } from '../../storage/database.js';

/** A cached upstream answer. */
export type CachedAnswer =
  | { readonly status: 'found'; readonly payload: unknown; readonly fetchedAt: string }
  | { readonly status: 'not-found'; readonly fetchedAt: string };

/**
 * The `upstream_cache` table: upstream answers by provider and key, with an expiry. It lives in
 * the store, so every instance sharing the store shares it (issue 4); queries are written once
 * for SQLite and PostgreSQL (timestamps are ISO-8601 UTC text, which compares correctly as text).
 */
export class UpstreamCacheRepository {
  constructor(private readonly db: Db) {}

  /** The answer cached for `provider` and `key`, unless it has expired at `now`. */
  async get(provider: string, key: string, now: Date): Promise<CachedAnswer | undefined> {
    const row = await this.db
      .selectFrom('upstream_cache')
      .select(['status', 'payload', 'fetched_at'])
      .where('provider', '=', provider)
      .where('lookup_key', '=', key)
      .where('expires_at', '>', now.toISOString())
      .executeTakeFirst();
    if (!row) return undefined;
    if (row.status === 'not-found') return { status: 'not-found', fetchedAt: row.fetched_at };
    if (row.payload === null) return undefined;
    return { status: 'found', payload: JSON.parse(row.payload) as unknown, fetchedAt: row.fetched_at };
  }

  /** Stores (or replaces) an answer for `ttlSeconds` from `now`. */
  async put(provider: string, key: string, answer: { status: 'found'; payload: unknown } | { status: 'not-found' }, ttlSeconds: number, now: Date): Promise<void> {
    const row = {
      provider,
      lookup_key: key,
      status: answer.status,
      payload: answer.status === 'found' ? JSON.stringify(answer.payload) : null,
      fetched_at: now.toISOString(),
      expires_at: new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
    };
    await this.db
      .insertInto('upstream_cache')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['provider', 'lookup_key']).doUpdateSet({
          status: row.status,
          payload: row.payload,
          fetched_at: row.fetched_at,
          expires_at: row.expires_at,
        }),
      )
      .execute();
  }

  /** Deletes answers that expired before `now` (of one provider, or all); returns how many. */
  async purgeExpired(now: Date, provider?: string): Promise<number> {
    let query = this.db.deleteFrom('upstream_cache').where('expires_at', '<=', now.toISOString());
    if (provider !== undefined) query = query.where('provider', '=', provider);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Deletes every cached answer of a provider, or of all providers; returns how many. */
  async clear(provider?: string): Promise<number> {
    let query = this.db.deleteFrom('upstream_cache');
    if (provider !== undefined) query = query.where('provider', '=', provider);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
