import { AccountCache } from './accounts/account-cache.js';
import { AccountRepository } from './accounts/account.repository.js';
import { AccountService } from './accounts/account.service.js';
import { Catalogue } from './catalogue/catalogue.js';
import { CreditLedgerRepository } from './credits/credit-ledger.repository.js';
import { DebitBatcher } from './credits/debit-batcher.js';
import { JsonlImporter } from './datasets/import/jsonl-importer.js';
import { RecordValidator } from './datasets/import/record-validator.js';
import { RecordRepository } from './datasets/record.repository.js';
import { TestPlates } from './datasets/test-plates.js';
import { LookupPipeline, type LookupObserver } from './lookup/lookup-pipeline.js';
import { LocalStoreProvider } from './providers/local/local-store.provider.js';
import { RecordCache } from './providers/local/record-cache.js';
import { providerChains, type ProviderRegistration } from './providers/provider-chains.js';
import type { Clock } from './shared/clock.js';
import type { Storage } from './storage/create-database.js';

export interface ServiceOptions {
  readonly clock: Clock;
  readonly requireApiKeyEverywhere: boolean;
  readonly observer?: LookupObserver;
}

/** Everything below the adapters, wired once; the server and the CLI both use it. */
export interface Services {
  readonly storage: Storage;
  readonly catalogue: Catalogue;
  readonly records: RecordRepository;
  readonly testPlates: TestPlates;
  readonly accounts: AccountService;
  readonly pipeline: LookupPipeline;
  readonly importer: JsonlImporter;
}

export function createServices(storage: Storage, options: ServiceOptions): Services {
  const { db } = storage;
  const catalogue = new Catalogue();
  const accountRepository = new AccountRepository(db);
  const ledger = new CreditLedgerRepository(db);
  const records = new RecordRepository(db);
  const accountCache = new AccountCache(accountRepository, storage.changeCounter);
  const testPlates = new TestPlates(records, storage.changeCounter);
  const recordCache = new RecordCache(storage.changeCounter);
  const local = new LocalStoreProvider(records, recordCache);
  // Upstream and offline providers register here, one line each (issue 4).
  const registrations: ProviderRegistration[] = [];
  const pipeline = new LookupPipeline({
    catalogue,
    accounts: accountCache,
    debits: new DebitBatcher(storage, ledger),
    testPlates,
    providersFor: providerChains(local, registrations),
    clock: options.clock,
    requireApiKeyEverywhere: options.requireApiKeyEverywhere,
    ...(options.observer ? { observer: options.observer } : {}),
  });
  return {
    storage,
    catalogue,
    records,
    testPlates,
    accounts: new AccountService(db, accountRepository, ledger, options.clock, accountCache),
    pipeline,
    importer: new JsonlImporter(new RecordValidator(catalogue), records, db, options.clock, () => {
      recordCache.clear();
    }),
  };
}
