import { AccountCache } from './accounts/account-cache.js';
import { ALL_ACCOUNTS, accountCacheCounter, type AccountChangeFeed } from './accounts/account-change-feed.js';
import { AccountRepository } from './accounts/account.repository.js';
import { AccountService } from './accounts/account.service.js';
import { ApiKeyRepository } from './accounts/api-key.repository.js';
import { KeyUsageRecorder } from './accounts/key-usage-recorder.js';
import { AuditLog, type Actor } from './audit/audit-log.js';
import { Catalogue } from './catalogue/catalogue.js';
import { CreditLedgerRepository } from './credits/credit-ledger.repository.js';
import { DebitBatcher } from './credits/debit-batcher.js';
import { WorkerDebitWriter } from './credits/debit-worker/worker-debit-writer.js';
import { InlineDebitWriter, type DebitWriter } from './credits/debit-writer.js';
import { JsonlImporter } from './datasets/import/jsonl-importer.js';
import { RecordValidator } from './datasets/import/record-validator.js';
import { RecordRepository } from './datasets/record.repository.js';
import { TestPlates } from './datasets/test-plates.js';
import { LookupPipeline, type LookupObserver } from './lookup/lookup-pipeline.js';
import { LocalStoreProvider } from './providers/local/local-store.provider.js';
import { RecordCache } from './providers/local/record-cache.js';
import { providerChains, type ProviderRegistration } from './providers/provider-chains.js';
import { upstreamRegistrations } from './providers/upstream/upstream-registrations.js';
import { offlineVinRegistration } from './providers/vin-offline/offline-vin.provider.js';
import { InProcessRateCounters } from './rate-limit/in-process-rate-counters.js';
import { RateLimiter, type RateCounters, type RateLimitDefaults } from './rate-limit/rate-limiter.js';
import type { SharedCache } from './redis/shared-cache.js';
import type { Clock } from './shared/clock.js';
import { ChangeSnapshot } from './storage/change-snapshot.js';
import type { Storage } from './storage/create-database.js';

export interface ServiceOptions {
  readonly clock: Clock;
  /** Where providers read their settings (Config.env); default: the process environment. */
  readonly env?: Readonly<NodeJS.ProcessEnv>;
  readonly requireApiKeyEverywhere: boolean;
  readonly observer?: LookupObserver;
  /** Write SQLite debits on a worker thread (`SQLITE_DEBIT_WORKER=true`; default false). */
  readonly sqliteDebitWorker?: boolean;
  /** Account changes shared between instances (Redis); without it, each process sees its own. */
  readonly accountChanges?: AccountChangeFeed;
  /** Where rate-limit counts live (Redis); default: this process. */
  readonly rateCounters?: RateCounters;
  /** Limits of accounts without their own (RATE_LIMIT_PER_SECOND / RATE_LIMIT_PER_DAY). */
  readonly rateLimitDefaults?: RateLimitDefaults;
  /** The cache shared by every instance (Redis), for upstream answers. */
  readonly sharedCache?: SharedCache;
  /** Whom the audit log names for changes made through `accounts` (the CLI: its user); default: system. */
  readonly actor?: Actor;
}

/** Everything below the adapters, wired once; the server and the CLI both use it. */
export interface Services {
  readonly storage: Storage;
  readonly catalogue: Catalogue;
  readonly records: RecordRepository;
  readonly testPlates: TestPlates;
  readonly accounts: AccountService;
  /** The append-only audit log (issue 16). */
  readonly audit: AuditLog;
  readonly pipeline: LookupPipeline;
  readonly importer: JsonlImporter;
  /** The cache shared by every instance, when REDIS_URL is set (src/redis/shared-cache.ts). */
  readonly sharedCache: SharedCache | undefined;
  /** Starts what must run before the first request (the debit worker). */
  start(): Promise<void>;
  /** Stops what the services started (the debit worker); the storage is closed by its owner. */
  close(): Promise<void>;
}

export function createServices(storage: Storage, options: ServiceOptions): Services {
  const { db } = storage;
  const catalogue = new Catalogue();
  const accountRepository = new AccountRepository(db);
  const ledger = new CreditLedgerRepository(db);
  const records = new RecordRepository(db);
  // One read of the change counter per lookup, shared by the caches (LookupPipeline refreshes it).
  const changes = new ChangeSnapshot(storage.changeCounter);
  const snapshotStorage = { engine: storage.engine, changeCounter: changes.current };
  const accountCache = new AccountCache(accountRepository, accountCacheCounter(snapshotStorage, options.accountChanges));
  options.accountChanges?.onChange((username) => {
    if (username === ALL_ACCOUNTS) accountCache.clear();
    else accountCache.invalidate(username);
  });
  const accountChanged = async (username: string): Promise<void> => {
    accountCache.invalidate(username);
    await options.accountChanges?.publish(username);
  };
  // Keys' last_used_at, written at most once a minute per key, off the request (issue 16).
  const keyUsage = new KeyUsageRecorder(db, new ApiKeyRepository(db));
  const audit = new AuditLog(db, options.clock);
  const testPlates = new TestPlates(records, changes.current);
  const recordCache = new RecordCache(changes.current);
  const local = new LocalStoreProvider(records, recordCache);
  // Upstream and offline providers register here, one line each (issue 4).
  const env = options.env ?? process.env;
  const vin = offlineVinRegistration(env, options.clock);
  const registrations: ProviderRegistration[] = [
    vin,
    ...upstreamRegistrations({ db, clock: options.clock, env, observer: options.observer, sharedCache: options.sharedCache, vinOffline: vin.provider }),
  ];
  // Debits are written in this thread by default. On an SQLite file they can be written by a
  // worker thread with its own connection (SQLITE_DEBIT_WORKER=true); measured, that costs more
  // than it saves: its commits change data_version on the main connection, which empties the
  // in-process caches every turn, and even with the caches kept (an experiment) the hand-off to the
  // thread made JSON lookups about a fifth slower on 2 cores than writing them here.
  const debitWriter: DebitWriter =
    storage.sqliteFile !== undefined && options.sqliteDebitWorker === true
      ? new WorkerDebitWriter(storage.sqliteFile)
      : new InlineDebitWriter(storage, ledger);
  const pipeline = new LookupPipeline({
    catalogue,
    accounts: accountCache,
    debits: new DebitBatcher(debitWriter),
    testPlates,
    providersFor: providerChains(local, registrations),
    clock: options.clock,
    requireApiKeyEverywhere: options.requireApiKeyEverywhere,
    ...(options.observer ? { observer: options.observer } : {}),
    onLookupStart: () => {
      changes.refresh();
    },
    rateLimiter: new RateLimiter(options.rateCounters ?? new InProcessRateCounters(), options.clock, options.rateLimitDefaults),
    onKeyUsed: (keyId, nowMs) => {
      keyUsage.note(keyId, nowMs);
    },
  });
  return {
    storage,
    catalogue,
    records,
    testPlates,
    accounts: new AccountService(db, accountRepository, ledger, options.clock, { invalidate: accountChanged }, undefined, audit, options.actor),
    audit,
    pipeline,
    importer: new JsonlImporter(new RecordValidator(catalogue), records, db, options.clock, () => {
      recordCache.clear();
    }),
    sharedCache: options.sharedCache,
    start: () => debitWriter.start(),
    close: async () => {
      await keyUsage.flush();
      await debitWriter.close();
      (vin.provider as { close?: () => void }).close?.();
    },
  };
}
