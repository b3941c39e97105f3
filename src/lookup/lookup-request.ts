import type { OperationDeclaration } from '../catalogue/operation.js';
import type { EffectiveLimits, RateWindow } from '../rate-limit/rate-limiter.js';
import type { FreeReason } from '../storage/database.js';
import type { LookupError } from './lookup-error.js';
import type { RawArguments } from './lookup-query.js';
import type { LookupResult } from '../results/result-documents.js';

/*
 * What a protocol adapter hands the lookup pipeline and what it gets back (lookup-pipeline.ts).
 * Nothing here is HTTP or XML.
 */

/**
 * How the caller proved who it is.
 * - `api-key`: HTTP Basic username + API key (the JSON interface).
 * - `username-parameter`: the `username` parameter of the XML bindings, plus the Basic credentials
 *   if the client sent them (required when the account or the operator says so).
 * - `session`: the adapter has already authenticated a user of this account (the web console's
 *   "Try it" page, through its login session and CSRF token); the pipeline only checks that the
 *   account exists and is enabled. No network caller can choose this mode: only the console sets it.
 */
export type LookupAuth =
  | { readonly mode: 'api-key'; readonly basic: BasicCredentials | undefined }
  | { readonly mode: 'username-parameter'; readonly basic: BasicCredentials | undefined }
  | { readonly mode: 'session'; readonly username: string; readonly userId?: number };

export interface BasicCredentials {
  readonly username: string;
  readonly apiKey: string;
}

/** The operation an adapter resolved from the catalogue, and the arguments it bound for it. */
export interface BoundCall {
  readonly operation: OperationDeclaration;
  readonly args: RawArguments;
}

/**
 * An operation the adapter could not resolve (an unknown name) or whose arguments it could not
 * bind: the error is raised by the pipeline's resolve stage, so it comes after authentication on
 * the JSON interface, which answers 401 before anything else (interface spec "Authentication").
 */
export interface RefusedCall {
  /** The operation when it was found and only binding failed (named in metrics). */
  readonly operation: OperationDeclaration | undefined;
  readonly refusal: LookupError;
}

/** One lookup as a protocol adapter hands it over. Nothing here is HTTP or XML. */
export interface LookupRequest {
  readonly call: BoundCall | RefusedCall;
  readonly auth: LookupAuth;
  /** `json`, `soap11`, `soap12`, `http-get`, `http-post`, `console` (the console's Try it page): recorded in the ledger and metrics. */
  readonly interface: string;
  readonly requestId: string;
  /** Public base URL (no trailing slash) for absolute links such as ImageUrl. */
  readonly baseUrl: string;
  /** The client's `Idempotency-Key` header as sent, unchecked (the replay stage checks it). */
  readonly idempotencyKey?: string | readonly string[] | undefined;
  /**
   * Who is calling, for the operations without a `username` (Catalogue.takesUsername). Absent: an
   * anonymous call is refused whatever the operator allows.
   */
  readonly caller?: CallerInfo;
  /**
   * The connection the answer goes back on (issue 31): a debit is made only while it is open, and
   * given back when the answer could not be written to it. Absent (tests, the CLI): every answer
   * counts as delivered.
   */
  readonly delivery?: AnswerDelivery;
}

/**
 * What money needs to know of the connection a lookup's answer goes back on (the HTTP adapters
 * build it from Node's request and response: src/http/lookup/answer-delivery.ts). Nothing here is
 * HTTP: a delivery is open or closed, and an answer is written whole or not.
 */
export interface AnswerDelivery {
  /** False once nothing written would reach the client: its connection is gone or no longer writable. */
  open(): boolean;
  /**
   * Calls `undelivered` once if the connection closes before the answer was written whole to it
   * (at once when it already has); never when the answer was written. Called after a debit's COMMIT.
   */
  whenUndelivered(undelivered: () => void): void;
}

/** The caller as the bindings see it: for anonymous calls (README "Operations without a username") and a key's allowed addresses. */
export interface CallerInfo {
  /** The client address the anonymous rate limit counts by, and a key's allowed addresses are checked against. */
  readonly address: string;
  /** An Authorization header was sent (even one that does not parse): such a call is never anonymous. */
  readonly sentAuthorization: boolean;
}

/** Which operations anonymous callers may use on the XML bindings, and how often per client address. */
export interface AnonymousAccess {
  /** Names of operations without a `username` parameter (ANONYMOUS_OPERATIONS); empty: none. */
  readonly operations: ReadonlySet<string>;
  readonly limits: EffectiveLimits;
}

export interface LookupOutcome {
  readonly operation: OperationDeclaration;
  readonly result: LookupResult;
  /** Credits debited (0 for test plates, empty rating searches and replays: see `free`). */
  readonly charged: number;
  readonly balance: number;
  /** True when the answer is the stored result of an earlier lookup with the same Idempotency-Key (charged 0). */
  readonly replayed?: true;
  /** Why an account's lookup cost nothing, as its `free` ledger row says; absent on charged and anonymous lookups. */
  readonly free?: FreeReason;
  /**
   * The source that answered (issue 32): `store`, a register's name (`dvla`), a paid upstream's
   * (`regcheck`), or `cache` for an upstream answer the shared cache served. The ledger row and the
   * X-Lookup-Source header carry it, never the result document. Absent on a replay (no source was asked).
   */
  readonly source?: string;
}

/** Told about every finished lookup; metrics implement it. */
export interface LookupObserver {
  onLookup(event: { operation: string; interface: string; outcome: string; seconds: number; charged: number }): void;
  /** A request refused by the account's rate limit (it is also reported to onLookup). */
  onRateLimited?(event: { window: RateWindow; interface: string }): void;
  /** A free lookup answered although its ledger row could not be written (see LookupCharging.free). */
  onFreeRowLost?(event: { interface: string; reason: FreeReason }): void;
  /**
   * A committed debit whose answer could not be written was given back (`reversed`), or its
   * reversal failed (`failed`: the debit stands, logged with its request id; LookupCharging.reverse).
   */
  onDebitReversal?(event: { interface: string; outcome: 'reversed' | 'failed' }): void;
}
