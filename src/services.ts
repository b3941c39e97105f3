import { AccountCache } from './accounts/account-cache.js';
import { ALL_ACCOUNTS, accountCacheCounter, type AccountChangeFeed } from './accounts/account-change-feed.js';
import { AccountRepository } from './accounts/account.repository.js';
import { AccountService } from './accounts/account.service.js';
import type { AlertConfig } from './alerts/alerting.js';
import { DEFAULT_ALERT_CONFIG } from './config/alert-config.js';
import { createAlerting, type Alerting, type WarnLog } from './alerts/alerting.js';
import { ApiKeyRepository } from './accounts/api-key.repository.js';
import { KeyUsageRecorder } from './accounts/key-usage-recorder.js';
import { DEFAULT_LOGIN_LIMITS, InProcessThrottleCounters, LoginThrottle, RequestLimiter, type ThrottleCounters, type Throttles } from './users/login-throttle.js';
import { StoreThrottleCounters } from './users/store-throttle-counters.js';
import { UserService } from './users/user.service.js';
import { AuditLog, type Actor } from './audit/audit-log.js';
import { Catalogue, withCosts } from './catalogue/catalogue.js';
import { OPERATIONS } from './catalogue/operations.js';
import { CreditLedgerRepository } from './credits/credit-ledger.repository.js';
import { DebitBatcher, giveBackUnsettled } from './credits/debit-batcher.js';
import { DebitWriter } from './credits/debit-writer.js';
import { IdempotencyRepository } from './credits/idempotency.repository.js';
import { DEFAULT_IMPORT_MAX_BYTES, ImportJobs, type ImportJobsOptions } from './datasets/import/import-jobs.js';
import { JsonlImporter } from './datasets/import/jsonl-importer.js';
import { RecordValidator } from './datasets/import/record-validator.js';
import { RecordRepository } from './datasets/record.repository.js';
import { TestPlates } from './datasets/test-plates.js';
import { IdempotentReplays } from './lookup/idempotent-replay.js';
import { LookupPipeline } from './lookup/lookup-pipeline.js';
import type { AnonymousAccess, LookupObserver } from './lookup/lookup-request.js';
import { LocalStoreProvider } from './providers/local/local-store.provider.js';
import { providerChains, type ProviderRegistration } from './providers/provider-chains.js';
import { type ProviderConfig } from './config/provider-config.js';
import { DEFAULT_ROUTING } from './config/paid-upstream-config.js';
import { upstreamRegistrations } from './providers/upstream/upstream-registrations.js';
import type { RegcheckHooks } from './providers/regcheck/regcheck.client.js';
import type { AnswerSinks } from './providers/upstream/answer-recording.js';
import { offlineVinRegistration } from './providers/vin-offline/offline-vin.provider.js';
import type { VinConfig } from './config/vin-config.js';
import { InProcessRateCounters } from './rate-limit/in-process-rate-counters.js';
import { RateLimiter, type RateCounters, type RateLimitDefaults } from './rate-limit/rate-limiter.js';
import type { SharedCache } from './redis/shared-cache.js';
import type { Clock } from './shared/clock.js';
import { VersionedCache } from './shared/versioned-cache.js';
import { ChangeSnapshot } from './storage/change-snapshot.js';
import type { Storage } from './storage/create-database.js';
import { UpstreamRouter } from './providers/routing/upstream-router.js';
import { monitorOf, UpstreamMonitor } from './providers/upstream/upstream-monitor.js';
import type { UpstreamContext } from './providers/upstream/upstream-source.js';

/** What the core services need: accounts, credits, records, test plates and imports. */
export interface CoreServiceOptions {
  readonly clock: Clock;
  /** Account changes shared between instances (Redis); without it, each process sees its own. */
  readonly accountChanges?: AccountChangeFeed;
  /** Whom the audit log names for changes made through `accounts` (the CLI: its user); default: system. */
  readonly actor?: Actor;
  /** Operator prices replacing the catalogue's (Config.operationCosts); default: the catalogue's. */
  readonly operationCosts?: Readonly<Record<string, number>>;
}

/** The core's options plus what the lookup pipeline needs (the server's; Config holds them). */
export interface ServiceOptions extends CoreServiceOptions {
  readonly requireApiKeyEverywhere: boolean;
  readonly observer?: LookupObserver;
  /** The upstream providers (Config.providers); default: none, lookups answer from the store only. */
  readonly providers?: ProviderConfig;
  /** Offline VIN decoding (Config.vin); default: off. */
  readonly vin?: VinConfig;
  /** Where rate-limit counts live (Redis); default: this process. */
  readonly rateCounters?: RateCounters;
  /**
   * Where the login throttle and the admin/account/console request limit count (Redis); default:
   * failed logins in the store (shared by the instances on one database), requests in this process.
   */
  readonly throttleCounters?: ThrottleCounters;
  /** Limits of accounts without their own (RATE_LIMIT_PER_SECOND / RATE_LIMIT_PER_DAY). */
  readonly rateLimitDefaults?: RateLimitDefaults;
  /** The cache shared by every instance (Redis), for upstream answers. */
  readonly sharedCache?: SharedCache;
  /** Plugged into the original service's provider when REGCHECK_USERNAME is set (its balance gate). */
  readonly regcheckHooks?: RegcheckHooks;
  /** The paid upstreams' record files (`<NAME>_RECORD_FILE`): the server's; a CLI command records nothing. */
  readonly recordings?: AnswerSinks;
  /** Providers registered beside the configured ones, on the app's upstream context (tests' fake paid upstreams). */
  readonly extraRegistrations?: (context: UpstreamContext) => ProviderRegistration[];
  /** Low-credit alerts and webhooks (Config.alerts); default: DEFAULT_ALERT_CONFIG. */
  readonly alerts?: AlertConfig;
  /** Where the alert loops report a failed round (the server's logger). */
  readonly alertLog?: WarnLog;
  /** Where a free lookup's ledger row that could not be written is reported (the server's logger). */
  readonly ledgerLog?: WarnLog;
  /** How long an Idempotency-Key is remembered (IDEMPOTENCY_RETENTION_HOURS); default 24 hours. */
  readonly idempotencyRetentionMs?: number;
  /** Operations anonymous callers may use (ANONYMOUS_OPERATIONS); default: none. */
  readonly anonymous?: AnonymousAccess;
  /** Import jobs of the admin API and console: the largest upload (IMPORT_MAX_BYTES) and timings; default 1 GiB. */
  readonly imports?: Omit<ImportJobsOptions, 'maxBytes'> & { readonly maxBytes?: number };
}

/**
 * The services every CLI command and the server share: the store, accounts and credits, records,
 * test plates and the JSON Lines importer. Building them reads no provider configuration.
 */
export interface CoreServices {
  readonly storage: Storage;
  readonly catalogue: Catalogue;
  readonly records: RecordRepository;
  readonly testPlates: TestPlates;
  readonly accounts: AccountService;
  /** The append-only audit log (issue 16). */
  readonly audit: AuditLog;
  /** Operators and customer users, sessions, invites and operator tokens (issue 16). */
  readonly users: UserService;
  readonly importer: JsonlImporter;
}

/** The core plus the lookup pipeline and its providers, wired once (the server). */
export interface Services extends CoreServices {
  readonly pipeline: LookupPipeline;
  /** The router over the paid upstreams (src/providers/routing/): their order, policies and states. */
  readonly router: UpstreamRouter;
  /** The cache shared by every instance, when REDIS_URL is set (src/redis/shared-cache.ts). */
  readonly sharedCache: SharedCache | undefined;
  /** Low-credit alerts and webhooks; the server starts their loops (`alerting.start()`), `close` stops them. */
  readonly alerting: Alerting;
  /** The login throttle and request limit of the admin and account APIs and the console. */
  readonly throttles: Throttles;
  /** Uploaded JSON Lines files imported as jobs (admin API and console); `close` stops them. */
  readonly imports: ImportJobs;
  /** Stops what the services started (alert loops, the offline VIN database); the storage is closed by its owner. */
  close(): Promise<void>;
}

/** The core and the in-process caches the lookup part reads through (and the core keeps fresh). */
interface Core {
  readonly services: CoreServices;
  readonly ledger: CreditLedgerRepository;
  readonly accountCache: AccountCache;
  readonly changes: ChangeSnapshot;
  /** Parsed records of the local store (lookup-pipeline.ts findRecord); imports clear it. */
  readonly recordCache: VersionedCache<unknown>;
}

function buildCore(storage: Storage, options: CoreServiceOptions): Core {
  const { db } = storage;
  const catalogue = new Catalogue(options.operationCosts ? withCosts(OPERATIONS, options.operationCosts) : OPERATIONS);
  const accountRepository = new AccountRepository(db);
  const ledger = new CreditLedgerRepository(db);
  const records = new RecordRepository(db);
  // One read of the change counter per lookup, shared by the caches (LookupPipeline refreshes it).
  const changes = new ChangeSnapshot(storage.changeCounter);
  const snapshotStorage = { changeSignal: storage.changeSignal, changeCounter: changes.current };
  const clock = options.clock;
  const accountCache = new AccountCache(accountRepository, accountCacheCounter(snapshotStorage, options.accountChanges, () => (clock.millis ? clock.millis() : clock.now().getTime())));
  options.accountChanges?.onChange((username) => {
    if (username === ALL_ACCOUNTS) accountCache.clear();
    else accountCache.invalidate(username);
  });
  const accountChanged = async (username: string): Promise<void> => {
    accountCache.invalidate(username);
    await options.accountChanges?.publish(username);
  };
  // Parsed records of the local store, at most 20,000 (lookup-pipeline.ts findRecord).
  const recordCache = new VersionedCache<unknown>(changes.current, 20_000);
  const audit = new AuditLog(db, options.clock);
  const accounts = new AccountService(storage, accountRepository, ledger, options.clock, { invalidate: accountChanged }, undefined, audit, options.actor);
  const services: CoreServices = {
    storage,
    catalogue,
    records,
    testPlates: new TestPlates(records, changes.current, storage, audit, options.clock),
    accounts,
    audit,
    users: new UserService(storage, options.clock, audit, accounts, options.actor),
    importer: new JsonlImporter(new RecordValidator(catalogue), records, storage, options.clock, () => {
      recordCache.clear();
    }),
  };
  return { services, ledger, accountCache, changes, recordCache };
}

/** The core services alone: what the CLI's account, credit, test-plate and import commands use. */
export function createCoreServices(storage: Storage, options: CoreServiceOptions): CoreServices {
  return buildCore(storage, options).services;
}

/** Without a provider configuration (tests, benches): no upstream, and /readyz lists none. */
const NO_UPSTREAM_PROVIDERS: ProviderConfig = { disabled: [] };
/** Without a VIN configuration: offline decoding off, so no database file is ever opened. */
const VIN_OFF: VinConfig = { enabled: false, databasePath: '', explicitPath: false };

const DEFAULT_IDEMPOTENCY_RETENTION_MS = 24 * 3_600_000;
/** Requests per minute per caller on each of the admin API, the account API and the console. */
const API_REQUESTS_PER_MINUTE = 600;

/**
 * The one place that chooses where the throttles count (issue 16): with Redis, both in Redis
 * (every instance shares them; in-process while Redis does not answer). Without it, failed logins
 * in the store, so the instances on one database share them too, and the request limit in this
 * process (each instance allows it on its own: a request budget, not a guard against guessing).
 */
function createThrottles(storage: Storage, options: ServiceOptions): Throttles {
  const now = (): number => options.clock.now().getTime();
  return {
    login: new LoginThrottle(options.throttleCounters ?? new StoreThrottleCounters(storage, options.clock), DEFAULT_LOGIN_LIMITS),
    requests: new RequestLimiter(options.throttleCounters ?? new InProcessThrottleCounters(now), API_REQUESTS_PER_MINUTE),
  };
}


/** Everything below the adapters: the core plus the lookup pipeline with its providers (the server). */
export function createServices(storage: Storage, options: ServiceOptions): Services {
  const { services: core, ledger, accountCache, changes, recordCache } = buildCore(storage, options);
  const local = new LocalStoreProvider(core.records);
  // Keys' last_used_at, written at most once a minute per key, off the request (issue 16).
  const keyUsage = new KeyUsageRecorder(storage, new ApiKeyRepository(storage.db));
  // Upstream and offline providers register here, one line each (issue 4).
  const vin = offlineVinRegistration(options.vin ?? VIN_OFF, options.clock);
  const providerConfig = options.providers ?? NO_UPSTREAM_PROVIDERS;
  // One monitor for the providers and the router that reads their answers (issue 32).
  const monitor = monitorOf(options.observer) ?? new UpstreamMonitor(() => options.clock.now());
  const router = new UpstreamRouter({ routing: providerConfig.routing ?? DEFAULT_ROUTING, monitor, clock: options.clock, db: storage.db, log: options.alertLog });
  const registrations: ProviderRegistration[] = [
    vin,
    ...upstreamRegistrations({
      db: storage.db,
      clock: options.clock,
      config: providerConfig,
      observer: options.observer,
      monitor,
      router,
      sharedCache: options.sharedCache,
      vinOffline: vin.provider,
      regcheckHooks: options.regcheckHooks,
      recordings: options.recordings,
      extra: options.extraRegistrations,
    }),
  ];
  const alerting = createAlerting(storage, options.clock, options.alerts ?? DEFAULT_ALERT_CONFIG, core.audit, options.alertLog);
  const idempotency = { repository: new IdempotencyRepository(storage), retentionMs: options.idempotencyRetentionMs ?? DEFAULT_IDEMPOTENCY_RETENTION_MS };
  const debitWriter = new DebitWriter(storage, ledger, idempotency, (spend) => {
    alerting.keyCaps.onKeySpend(spend);
  });
  const pipeline = new LookupPipeline({
    accounts: accountCache,
    debits: new DebitBatcher(debitWriter, (batch) => {
      const ids = batch.debits.map((d) => `${d.requestId} (account ${d.accountId}, ${d.cost})`).join(', ');
      if (batch.outcome !== 'committed') {
        options.ledgerLog?.warn(
          `debit batch ${batch.transactionId}, whose COMMIT was cut off, ${batch.outcome === 'aborted' ? 'was rolled back: nothing was charged' : 'has an outcome the database never reported'}: ${ids}`,
        );
        return;
      }
      // The batch committed after its lookups were answered "temporarily unavailable": each debit
      // is given back in the same ledger (giveBackUnsettled), as an undelivered answer's is.
      void giveBackUnsettled(debitWriter, batch, () => options.clock.now().toISOString()).then((results) => {
        for (const r of results) {
          const what = `debit ${r.requestId} (account ${r.accountId}, ${r.cost} credits) committed in batch ${batch.transactionId} after its lookup was answered "temporarily unavailable" (the database connection was lost during COMMIT)`;
          if (r.given) options.ledgerLog?.warn(`${what}: given back`);
          else options.ledgerLog?.warn(`${what} and could not be given back: it stands; give it back by hand`, r.error);
        }
      });
    }),
    replays: new IdempotentReplays(idempotency.repository, options.clock, idempotency.retentionMs),
    testPlates: core.testPlates,
    providersFor: providerChains(local, registrations, router),
    recordCache,
    clock: options.clock,
    requireApiKeyEverywhere: options.requireApiKeyEverywhere,
    ...(options.observer ? { observer: options.observer } : {}),
    onLookupStart: () => {
      changes.refresh();
    },
    rateLimiter: new RateLimiter(options.rateCounters ?? new InProcessRateCounters(), options.clock, options.rateLimitDefaults),
    onDebited: (accountId, cost, balanceAfter) => {
      alerting.alerts.onDebit(accountId, cost, balanceAfter);
    },
    onFreeRowLost: (row, error) => {
      options.ledgerLog?.warn(`the ledger row of free lookup ${row.requestId} (account ${row.accountId}, ${row.operation}, ${row.reason}) was not written; the lookup was answered`, error);
    },
    onReversalFailed: (row, error) => {
      options.ledgerLog?.warn(
        `debit ${row.requestId} (account ${row.accountId}, ${row.operation}, ${row.cost} credits) was not delivered and could not be given back: it stands; give it back by hand`,
        error,
      );
    },
    onKeyUsed: (keyId, nowMs) => {
      keyUsage.note(keyId, nowMs);
    },
    ...(options.anonymous ? { anonymous: options.anonymous } : {}),
  });
  const imports = new ImportJobs(storage, core.importer, core.audit, options.clock, { ...options.imports, maxBytes: options.imports?.maxBytes ?? DEFAULT_IMPORT_MAX_BYTES });
  return {
    ...core,
    pipeline,
    router,
    sharedCache: options.sharedCache,
    alerting,
    throttles: createThrottles(storage, options),
    imports,
    close: async () => {
      // Debits given back for undelivered answers (issue 31) reach the store before it closes.
      await pipeline.settled();
      await imports.close();
      await alerting.close();
      await keyUsage.flush();
      await router.settled();
      (vin.provider as { close?: () => void }).close?.();
    },
  };
}
