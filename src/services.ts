import { AccountRepository } from './accounts/account.repository.js';
import { AccountService } from './accounts/account.service.js';
import { Catalogue } from './catalogue/catalogue.js';
import { CreditLedgerRepository } from './credits/credit-ledger.repository.js';
import { JsonlImporter } from './datasets/import/jsonl-importer.js';
import { RecordValidator } from './datasets/import/record-validator.js';
import { RecordRepository } from './datasets/record.repository.js';
import { LookupPipeline, type LookupObserver } from './lookup/lookup-pipeline.js';
import { LocalStoreProvider } from './providers/local/local-store.provider.js';
import type { Provider } from './providers/provider.js';
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
  // Every operation answers from the local store today; upstream providers join the chain later.
  const chain: readonly Provider[] = [new LocalStoreProvider(records)];
  const pipeline = new LookupPipeline({
    catalogue,
    accounts: accountRepository,
    ledger,
    records,
    providersFor: () => chain,
    clock: options.clock,
    requireApiKeyEverywhere: options.requireApiKeyEverywhere,
    ...(options.observer ? { observer: options.observer } : {}),
  });
  return {
    storage,
    catalogue,
    records,
    accounts: new AccountService(db, accountRepository, ledger, options.clock),
    pipeline,
    importer: new JsonlImporter(new RecordValidator(catalogue), records, db, options.clock),
  };
}
