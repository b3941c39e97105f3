import type { ColumnType, CompiledQuery, Generated, Kysely, QueryResult } from 'kysely';
import type { MaybePromise } from '../shared/maybe-promise.js';

/** Row types as stored. Timestamps are ISO-8601 UTC text on both engines. */
export interface AccountsTable {
  id: Generated<number>;
  username: string;
  credits: number;
  /** 0/1 on SQLite, kept numeric on PostgreSQL too so queries are written once. */
  disabled: number;
  require_api_key: number;
  created_at: string;
  /** Migration 0003: NULL = server default, 0 = no limit, N = at most N per window. */
  rate_limit_per_second: number | null;
  rate_limit_per_day: number | null;
  /** Migration 0007: set when an account with a ledger was closed (it cannot be deleted). */
  closed_at: ColumnType<string | null, string | null | undefined, string | null>;
}

/**
 * What a ledger row did to the balance. `removal`: credits an operator took back (migration 0007);
 * `free`: a lookup that cost nothing, delta 0, with its `free_reason` (migration 0008);
 * `reversal`: a debit given back, `+cost`, because its answer could not be written to the client
 * (the connection closed first, issue 31). It carries the debit's request id, operation, interface
 * and query; kind is text on both engines, so it needs no migration.
 */
export type LedgerKind = 'debit' | 'free' | 'topup' | 'removal' | 'reversal';

/**
 * Why a lookup cost nothing (ledger.free_reason, migration 0008): a test plate, a result its codec
 * says is not chargeable (an empty Euro NCAP search...), or an Idempotency-Key replay of a lookup
 * already paid for.
 */
export type FreeReason = 'test-plate' | 'no-result' | 'replay';

export interface LedgerTable {
  id: Generated<number>;
  account_id: number;
  kind: LedgerKind;
  operation: string | null;
  interface: string | null;
  query: string | null;
  delta: number;
  balance_after: number;
  request_id: string | null;
  created_at: string;
  /** Migration 0007: an operator's reference (invoice, ticket) on a grant or removal. */
  reference: ColumnType<string | null, string | null | undefined, string | null>;
  /** Migration 0008: set on `free` rows only. */
  free_reason: ColumnType<FreeReason | null, FreeReason | null | undefined, FreeReason | null>;
  /** Migration 0019: the API key that made the lookup; null before, and for grants and username-only lookups. */
  api_key_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** Migration 0019: the console user of a Try it lookup. */
  user_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** Migration 0018: the source that answered a lookup (`store`, a register, an upstream, `cache`); null on other rows. */
  source: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Migration 0004: several named keys per account, stored as hashes. */
export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  /** The key's first characters, to tell keys apart; null for keys migrated from before 0004. */
  prefix: string | null;
  key_hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Set when the key was rolled: it keeps working until then. */
  expires_at: string | null;
  /** Migration 0019: the key's own rules (null: none) and its spend in the cap's period. */
  cap_credits: ColumnType<number | null, number | null | undefined, number | null>;
  cap_period: ColumnType<CapPeriod | null, CapPeriod | null | undefined, CapPeriod | null>;
  cap_spent: ColumnType<number, number | undefined, number>;
  cap_period_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of operation names, `country:XX` and `vin`. */
  operations: ColumnType<string | null, string | null | undefined, string | null>;
  rate_per_second: ColumnType<number | null, number | null | undefined, number | null>;
  rate_per_day: ColumnType<number | null, number | null | undefined, number | null>;
  /** JSON array of CIDR blocks. */
  allowed_ips: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON object of string values. */
  labels: ColumnType<string | null, string | null | undefined, string | null>;
}

/** The period a key's credit cap counts over (migration 0019). */
export type CapPeriod = 'day' | 'month' | 'total';

/** Migration 0007: operators (account_id NULL) and customers' users. */
export interface UsersTable {
  id: Generated<number>;
  name: string;
  role: 'admin' | 'viewer' | 'owner' | 'member';
  account_id: number | null;
  /** scrypt (src/users/password.ts); null until set from an invite. */
  password_hash: string | null;
  must_change_password: number;
  disabled: number;
  created_at: string;
}

export interface SessionsTable {
  /** SHA-256 of the session id the cookie carries. */
  id_hash: string;
  user_id: number;
  csrf_token: string;
  created_at: string;
  expires_at: string;
  address: string | null;
}

export interface InvitesTable {
  token_hash: string;
  user_id: number;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface OperatorTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  prefix: string;
  token_hash: string;
  scope: 'read' | 'write';
  created_at: string;
  revoked_at: string | null;
}

/** Append-only: rows are inserted, never updated or deleted. */
export interface AuditLogTable {
  id: Generated<number>;
  at: string;
  actor_kind: string;
  actor: string;
  action: string;
  target_kind: string;
  target: string;
  address: string | null;
  before: string | null;
  after: string | null;
}

export interface RecordsTable {
  dataset: string;
  lookup_key: string;
  /** The record as JSON text: vehicleJson for vehicles, the UKMOT object for MOT records. */
  document: string;
  source: string;
  updated_at: string;
}

/**
 * Records that answer one operation only: the original service's answers (migration 0014), read
 * before the dataset's record of `records`.
 */
export interface OperationRecordsTable {
  operation: string;
  lookup_key: string;
  /** The record as JSON text, as `records.document`. */
  document: string;
  source: string;
  updated_at: string;
}

export interface NcapRatingsTable {
  /** Euro NCAP's own Id where given, else "MAKE|MODEL|YEAR". */
  rating_key: string;
  make_norm: string;
  model_norm: string;
  document: string;
  source: string;
  updated_at: string;
}

export interface TestPlatesTable {
  operation: string;
  lookup_key: string;
  created_at: ColumnType<string, string, never>;
}

/** Upstream answers (migration 0002), read and written by UpstreamCacheRepository. */
export interface UpstreamCacheTable {
  /** Provider name: `dvla`, `dvsa-mot`... */
  provider: string;
  /** The provider's own key for the request (the VRM for DVLA and DVSA). */
  lookup_key: string;
  status: 'found' | 'not-found';
  /** The upstream's answer as JSON text; null for not-found. */
  payload: string | null;
  fetched_at: string;
  expires_at: string;
}

/** Where webhook events go (migration 0005); `account_id` NULL: an operator endpoint for every account. */
export interface WebhookEndpointsTable {
  id: Generated<number>;
  account_id: number | null;
  url: string;
  description: string;
  enabled: number;
  /** JSON array of event types. */
  events: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  created_by: 'account' | 'operator';
  created_at: string;
  updated_at: string;
}

/** The webhook outbox: one row per event and endpoint. */
export interface WebhookMessagesTable {
  id: string;
  endpoint_id: number;
  account_id: number | null;
  event_type: string;
  /** The exact body sent (and signed). */
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string;
  lease_until: string | null;
  lease_owner: string | null;
  created_at: string;
  updated_at: string;
}

/** One delivery attempt. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  message_id: string;
  endpoint_id: number;
  attempt: number;
  started_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  succeeded: number;
  /** Migration 0014: the first bytes of the receiver's answer (RESPONSE_EXCERPT_BYTES); null without one. */
  response_body: string | null;
}

/**
 * Migration 0012: the ledger row an operator's grant or removal with a reference made, one per
 * (account, kind, reference): a repeat of the reference answers that row instead of moving credits again.
 */
export interface CreditReferencesTable {
  account_id: number;
  kind: 'topup' | 'removal';
  reference: string;
  ledger_id: number;
}

export interface CreditAlertSettingsTable {
  account_id: number;
  /** JSON array of whole numbers, highest first. */
  thresholds: string;
  updated_at: string;
}

export interface CreditAlertFiredTable {
  account_id: number;
  threshold: number;
  fired_at: string;
}

export interface CreditAlertCursorTable {
  name: string;
  ledger_id: number;
}

/** Charged lookups that carried an Idempotency-Key (migration 0006), IdempotencyRepository's. */
export interface IdempotencyKeysTable {
  account_id: number;
  /** The client's Idempotency-Key, unique per account. */
  idempotency_key: string;
  /** The operation and the query as the ledger writes them: a reuse must match both. */
  operation: string;
  query: string;
  /** The answer paid for: its row in idempotency_results (migration 0020). */
  result_id: number;
  charged: number;
  /** Our request id of the paid lookup, as in its ledger row. */
  request_id: string;
  created_at: string;
}

/**
 * The answers Idempotency-Key records refer to (migration 0020): one row per answer stored, which
 * every record of the same frozen result may share while the row is young (IdempotencyRepository).
 */
export interface IdempotencyResultsTable {
  id: Generated<number>;
  /** The LookupResult answered and paid for, as JSON text (re-encoded for any binding). */
  result: string;
  /** When this row was written (ISO text): it is reused and purged by this age. */
  stored_at: string;
}

/**
 * Finished lookups per UTC hour, interface, operation and outcome, summed over every instance
 * (migration 0011; written by LookupStatsRepository.add, an additive upsert).
 */
export interface LookupStatsTable {
  /** The hour's start, ISO-8601 UTC (`2026-11-25T17:00:00.000Z`). */
  hour: string;
  interface: string;
  operation: string;
  /** `success` or the error code in lower case, as the lookups metric labels it. */
  outcome: string;
  count: number;
}

/** Migration 0010: failed logins per user name or address, shared by the instances on one store. */
export interface LoginThrottleTable {
  /** `login:u:<lower-cased user name>` or `login:a:<client address>`. */
  subject: string;
  /** Attempts counted in the window (src/users/login-throttle.ts counts before the password check). */
  attempts: number;
  window_started_at: string;
}

/** Migration 0009: import jobs of the admin API and console (src/datasets/import/import-jobs.ts). */
export interface ImportsTable {
  id: Generated<number>;
  actor_kind: string;
  actor: string;
  file_name: string;
  file_size: number;
  source: string;
  /** 0/1. */
  skip_invalid: number;
  state: 'queued' | 'validating' | 'importing' | 'done' | 'failed';
  bytes_read: ColumnType<number, number | undefined, number>;
  lines_read: ColumnType<number, number | undefined, number>;
  imported: ColumnType<number, number | undefined, number>;
  invalid: ColumnType<number, number | undefined, number>;
  /** 0/1: whether the importer wrote the file (false when invalid lines stopped it). */
  committed: ColumnType<number, number | undefined, number>;
  /** JSON text: lines imported per operation. */
  by_operation: ColumnType<string, string | undefined, string>;
  /** JSON text: the first invalid lines, `[{"line":N,"reason":"..."}]`. */
  invalid_lines: ColumnType<string, string | undefined, string>;
  error: string | null;
  instance: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  heartbeat_at: string;
}

/** Upstream calls and cache answers per UTC day (migration 0012), added to by every instance. */
export interface UpstreamStatsTable {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  provider: string;
  /** The operation asked; empty for sources that do not name it. */
  operation: string;
  /** `found`, `not_found`, `failed` (calls), `cache_found`, `cache_not_found` (answered by the cache). */
  outcome: string;
  count: number;
}

/** A balance alert of an upstream that has fired and not re-armed (migration 0012). */
export interface UpstreamAlertMarksTable {
  provider: string;
  /** The webhook event type: `upstream.credits.low` or `upstream.credits.depleted`. */
  event: string;
  /** The balance that fired it. */
  credits: number;
  fired_at: string;
}

/** The operator's balance at a paid upstream, shared by every instance (migration 0015). */
/** Migration 0018: a paid upstream taken out for every instance (UpstreamStateRepository). */
export interface UpstreamStatesTable {
  provider: string;
  /** `out-of-funds`, `quota` or `disabled` (refused credentials). */
  state: string;
  reason: string;
  /** When it may be asked again (ISO 8601); null: until a balance says otherwise, or for good. */
  until: string | null;
  changed_at: string;
}

/** Migration 0018: spend at a paid upstream per UTC day, in millionths of UPSTREAM_CURRENCY. */
export interface UpstreamSpendTable {
  provider: string;
  day: string;
  /** bigint: node-postgres answers it as a string, SQLite as a number (read through Number()). */
  spent_micros: ColumnType<number | string, number, number>;
  calls: number;
}

export interface UpstreamBalancesTable {
  provider: string;
  credits: number;
  /** When an instance last read it from the upstream (ISO 8601, UTC). */
  read_at: string;
}

export interface DatabaseSchema {
  accounts: AccountsTable;
  ledger: LedgerTable;
  api_keys: ApiKeysTable;
  users: UsersTable;
  sessions: SessionsTable;
  invites: InvitesTable;
  operator_tokens: OperatorTokensTable;
  audit_log: AuditLogTable;
  records: RecordsTable;
  operation_records: OperationRecordsTable;
  ncap_ratings: NcapRatingsTable;
  test_plates: TestPlatesTable;
  upstream_cache: UpstreamCacheTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  credit_alert_settings: CreditAlertSettingsTable;
  credit_alert_fired: CreditAlertFiredTable;
  credit_alert_cursor: CreditAlertCursorTable;
  idempotency_keys: IdempotencyKeysTable;
  idempotency_results: IdempotencyResultsTable;
  lookup_stats: LookupStatsTable;
  login_throttle: LoginThrottleTable;
  imports: ImportsTable;
  upstream_stats: UpstreamStatsTable;
  upstream_alert_marks: UpstreamAlertMarksTable;
  upstream_balances: UpstreamBalancesTable;
  upstream_states: UpstreamStatesTable;
  upstream_spend: UpstreamSpendTable;
  credit_references: CreditReferencesTable;
}

export type Db = Kysely<DatabaseSchema>;

/**
 * One transaction, on either engine (Storage.transaction). Anything that moves credits takes one as
 * its first parameter (STYLE.md 6), the way Kysely's example passes `trx`.
 */
export interface Tx {
  /**
   * Kysely's query builders, bound to this transaction. On SQLite this is the store's one
   * connection, held for the whole transaction: inside `work`, query through `tx`, never through
   * `Storage.db` (that would wait for the connection this transaction holds).
   */
  readonly db: Kysely<DatabaseSchema>;
  /**
   * Runs a query compiled once (PreparedQuery) in this transaction. On SQLite it runs the cached
   * statement synchronously, without Kysely's executor, and returns its result as a plain value
   * (no promise: the cost guard, test/cost/, counts them): the per-statement cost of the hot debit
   * path is the statement itself. On PostgreSQL it is the transaction's executeQuery.
   */
  run<R>(query: CompiledQuery<R>): MaybePromise<QueryResult<R>>;
}
