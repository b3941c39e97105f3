import type { Migration, MigrationProvider } from 'kysely';
import type { Engine } from '../engine.js';
import { initialMigration } from './0001-initial.js';
import { upstreamCacheMigration } from './0002-upstream-cache.js';
import { accountRateLimitsMigration } from './0003-account-rate-limits.js';
import { adminMigration } from './0007-admin.js';
import { apiKeysMigration } from './0004-api-keys.js';
import { freeLookupsMigration } from './0008-free-lookups.js';
import { idempotencyKeysMigration } from './0006-idempotency-keys.js';
import { importsMigration } from './0009-imports.js';
import { webhooksMigration } from './0005-webhooks.js';
import { overviewMigration } from './0011-overview.js';
import { loginThrottleMigration } from './0010-login-throttle.js';
import { upstreamSpendMigration } from './0012-upstream-spend.js';
import { creditReferencesMigration } from './0013-credit-references.js';
import { operationRecordsMigration } from './0014-operation-records.js';
import { upstreamBalancesMigration } from './0015-upstream-balances.js';
import { webhookResponsesMigration } from './0016-webhook-responses.js';
import { upstreamRoutingMigration } from './0018-upstream-routing.js';
import { keyProductsMigration } from './0019-key-products.js';
import { idempotencyResultsMigration } from './0020-idempotency-results.js';

/** Migrations in order; names sort lexically, which is the order Kysely applies them. */
export function migrationProvider(engine: Engine): MigrationProvider {
  const migrations: Record<string, Migration> = {
    '0001-initial': initialMigration(engine),
    '0002-upstream-cache': upstreamCacheMigration,
    '0003-account-rate-limits': accountRateLimitsMigration,
    '0004-api-keys': apiKeysMigration(engine),
    '0005-webhooks': webhooksMigration(engine),
    '0006-idempotency-keys': idempotencyKeysMigration,
    '0007-admin': adminMigration(engine),
    '0008-free-lookups': freeLookupsMigration,
    '0009-imports': importsMigration(engine),
    '0010-login-throttle': loginThrottleMigration,
    '0011-overview': overviewMigration,
    '0012-upstream-spend': upstreamSpendMigration,
    '0013-credit-references': creditReferencesMigration,
    '0014-operation-records': operationRecordsMigration,
    '0015-upstream-balances': upstreamBalancesMigration,
    '0016-webhook-responses': webhookResponsesMigration,
    '0018-upstream-routing': upstreamRoutingMigration,
    '0019-key-products': keyProductsMigration,
    '0020-idempotency-results': idempotencyResultsMigration(engine),
  };
  return { getMigrations: () => Promise.resolve(migrations) };
}
