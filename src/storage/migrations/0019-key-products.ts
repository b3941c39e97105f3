import type { Kysely, Migration } from 'kysely';

/**
 * Keys as products (issue 33): what each key spent, and rules of its own.
 *
 * Ledger: `api_key_id` names the key that authenticated a lookup, `user_id` the console user of a
 * Try it lookup; both NULL on every row written before (and on grants, removals and lookups made by
 * username alone). Ids rather than names: a key is renamed by nobody, but rolled keys share a
 * name, and the usage query groups by key. ADD COLUMN without a default rewrites no row on either
 * engine. The index answers "usage of this key" (ledger filter, usage by key) without scanning the
 * account's whole history; it costs each ledger insert one more index entry.
 *
 * api_keys: each rule is nullable, NULL meaning "no rule" (so an existing key is unchanged and a
 * key without rules costs the lookup path nothing: src/accounts/key-rules.ts).
 * - cap_credits / cap_period ('day' | 'month' | 'total'): at most N credits per period;
 *   cap_spent is what the key spent in the period cap_period_key names ('2026-11-28', '2026-11',
 *   'total'). The debit writer moves cap_spent in the debit's transaction with a conditional
 *   update (as the balance), so a cap is exact under concurrency; a new period starts from 0 in
 *   that same update, so no job has to reset anything at the turn.
 * - operations: JSON array of names, `country:XX` and `vin`.
 * - rate_per_second / rate_per_day: a key's own limits, inside the account's.
 * - allowed_ips: JSON array of CIDR blocks.
 * - labels: JSON object of string values.
 */
async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('ledger').addColumn('api_key_id', 'integer').execute();
  await db.schema.alterTable('ledger').addColumn('user_id', 'integer').execute();
  await db.schema.createIndex('ledger_account_key').on('ledger').columns(['account_id', 'api_key_id', 'created_at']).execute();
  await db.schema.alterTable('api_keys').addColumn('cap_credits', 'integer').execute();
  await db.schema.alterTable('api_keys').addColumn('cap_period', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('cap_spent', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('api_keys').addColumn('cap_period_key', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('operations', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('rate_per_second', 'integer').execute();
  await db.schema.alterTable('api_keys').addColumn('rate_per_day', 'integer').execute();
  await db.schema.alterTable('api_keys').addColumn('allowed_ips', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('labels', 'text').execute();
}

async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('ledger_account_key').execute();
  await db.schema.alterTable('ledger').dropColumn('user_id').execute();
  await db.schema.alterTable('ledger').dropColumn('api_key_id').execute();
  for (const column of ['labels', 'allowed_ips', 'rate_per_day', 'rate_per_second', 'operations', 'cap_period_key', 'cap_spent', 'cap_period', 'cap_credits']) {
    await db.schema.alterTable('api_keys').dropColumn(column).execute();
  }
}

export const keyProductsMigration: Migration = { up, down };
