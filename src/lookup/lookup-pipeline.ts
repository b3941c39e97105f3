import type { AccountCache } from '../accounts/account-cache.js';
import type { OperationDeclaration } from '../catalogue/operation.js';
import type { FreeLookupDetails, ReversalDetails } from '../credits/credit-ledger.repository.js';
import type { DebitBatcher } from '../credits/debit-batcher.js';
import type { TestPlates } from '../datasets/test-plates.js';
import { provenanceOf, STORE_SOURCE, type Provider } from './provider.js';
import type { RateLimiter } from '../rate-limit/rate-limiter.js';
import type { Clock } from '../shared/clock.js';
import { deepFreeze } from '../shared/deep-freeze.js';
import { PerObjectMemo } from '../shared/per-object-memo.js';
import type { VersionedCache } from '../shared/versioned-cache.js';
import { checkIdempotencyKey, type IdempotentReplays } from './idempotent-replay.js';
import { ANONYMOUS, LookupAuthentication } from './lookup-authentication.js';
import { LookupCharging } from './lookup-charging.js';
import { LookupError, MESSAGES } from './lookup-error.js';
import { buildQuery, type LookupQuery } from './lookup-query.js';
import type { AnonymousAccess, BoundCall, LookupObserver, LookupOutcome, LookupRequest } from './lookup-request.js';
import { codecOf, resultOf } from '../results/index.js';
import { isStoreUnavailable } from '../storage/store-unavailable.js';
import type { LookupResult } from '../results/result-documents.js';

export interface LookupPipelineDeps {
  readonly accounts: AccountCache;
  readonly debits: DebitBatcher;
  readonly testPlates: TestPlates;
  /** The providers asked, in order, for an operation. */
  readonly providersFor: (op: OperationDeclaration) => readonly Provider[];
  /**
   * Records the first provider of a chain called cacheable, deep-frozen, by operation and key
   * (recordCacheKey): a repeated lookup is answered from here without asking any provider.
   * Cleared by imports in this process; the change counter clears it for other processes' writes.
   */
  readonly recordCache: VersionedCache<unknown>;
  readonly clock: Clock;
  /** Operator setting: the XML bindings require the API key for every account. */
  readonly requireApiKeyEverywhere: boolean;
  readonly observer?: LookupObserver;
  /** Called as each lookup starts, before any cache is consulted (refreshes the change snapshot). */
  readonly onLookupStart?: () => void;
  /** Per-account rate limits, checked right after authentication; none when absent. */
  readonly rateLimiter?: RateLimiter;
  /**
   * Told after each committed debit, synchronously and never awaited (low-credit alerts compare
   * the balance in memory: CreditAlerts.onDebit).
   */
  readonly onDebited?: (accountId: number, cost: number, balanceAfter: number) => void;
  /** Stored answers by Idempotency-Key (the replay stage); without it a key is refused. */
  readonly replays?: IdempotentReplays;
  /**
   * Told when a free lookup's ledger row could not be written (the lookup is answered anyway, see
   * LookupPipeline.free): the server logs it. The observer's onFreeRowLost counts it.
   */
  readonly onFreeRowLost?: (row: FreeLookupDetails & { readonly accountId: number }, error: unknown) => void;
  /**
   * Told when a debit whose answer was not delivered could not be given back (LookupCharging.reverse):
   * the server logs it with the request id. The observer's onDebitReversal counts it.
   */
  readonly onReversalFailed?: (row: ReversalDetails & { readonly accountId: number }, error: unknown) => void;
  /** Told which API key authenticated a lookup (KeyUsageRecorder: last_used_at, off the hot path). */
  readonly onKeyUsed?: (keyId: number, nowMs: number) => void;
  /** Operations anonymous callers may use (free, limited per address); none when absent. */
  readonly anonymous?: AnonymousAccess;
}

/**
 * One lookup as named stages (docs/architecture.md; DESIGN.md "Shape"), in `run`:
 * resolve -> authenticate -> (key rules) -> rate limit -> validate -> replay -> price -> answer -> shape -> debit.
 * A key with rules of its own (issue 33) is checked for its client address before the rate limits,
 * its own rate limits after the account's, its operations once the call is resolved, and its cap
 * in the debit's transaction (exact, as the balance); a key without rules skips all of it.
 * Authentication and rate limits are lookup-authentication.ts; replay, price and debit (the money)
 * are lookup-charging.ts; what goes in and out is lookup-request.ts. Credits move only after data
 * was found and shaped; every failure before that costs nothing.
 *
 * The sync path: a stage whose cache has the answer (the account, the test plates, the record: all
 * VersionedCache) returns it as a plain value, and `run` awaits only promises. Awaiting a plain
 * value would still cost a microtask turn per stage, and a promise-returning stage a promise per
 * request; bench:json, bench:soap and the cost guard (test/cost/) measure this path, so keep it.
 */
export class LookupPipeline {
  /** Results of deep-frozen records, by record, then operation and base URL (see shape). */
  private readonly shaped = new PerObjectMemo<object, LookupResult>(
    // Operations sharing a dataset times base URLs; the base URL comes from the Host header when
    // BASE_URL is unset, so this bound keeps a caller varying it from growing the memory.
    16,
  );
  private readonly authentication: LookupAuthentication;
  private readonly charging: LookupCharging;

  constructor(private readonly deps: LookupPipelineDeps) {
    this.authentication = new LookupAuthentication(deps);
    this.charging = new LookupCharging(deps);
  }

  /** Resolves once the reversals of undelivered answers started so far are written (LookupCharging.settled). */
  settled(): Promise<void> {
    return this.charging.settled();
  }

  /**
   * Runs one lookup. Call it from a request handler (an I/O callback): the caches' view of other
   * processes' changes is shared per turn of the event loop (ChangeSnapshot).
   */
  execute(request: LookupRequest): Promise<LookupOutcome> {
    const started = performance.now();
    this.deps.onLookupStart?.();
    // `then` rather than an async function awaiting run: one promise per lookup instead of two.
    return this.run(request).then(
      (outcome) => {
        this.deps.observer?.onLookup({
          operation: outcome.operation.name,
          interface: request.interface,
          outcome: 'success',
          seconds: (performance.now() - started) / 1000,
          charged: outcome.charged,
        });
        return outcome;
      },
      (thrown: unknown) => {
        const error = storeFailureAsUnavailable(thrown, request);
        const code = error instanceof LookupError ? error.code : 'INTERNAL';
        this.deps.observer?.onLookup({
          // Unknown names are not echoed into metric labels: that would let callers create series.
          operation: request.call.operation?.name ?? 'unknown',
          interface: request.interface,
          outcome: code.toLowerCase(),
          seconds: (performance.now() - started) / 1000,
          charged: 0,
        });
        throw error;
      },
    );
  }

  /** The stages in order; only promises are awaited (see the class comment). */
  private async run(request: LookupRequest): Promise<LookupOutcome> {
    // resolve: the XML bindings name the account in the call, so it is resolved first there; the
    // JSON interface (and the console) answer 401 before anything else, whatever the method.
    const named = request.auth.mode === 'username-parameter' ? resolve(request) : undefined;
    // authenticate
    const authenticated = this.authentication.authenticate(request.auth, named);
    if (authenticated === ANONYMOUS) return this.runAnonymous(named ?? resolve(request), request);
    const { account, key } = authenticated instanceof Promise ? await authenticated : authenticated;
    // key rules (issue 33): only a key that has rules pays for them
    const rules = key?.rules;
    if (rules) this.authentication.checkKeyAddress(rules, request);
    // rate limit
    const limited = this.authentication.rateLimit(account, request, rules);
    if (limited) await limited;
    const call = named ?? resolve(request);
    if (rules) this.authentication.checkKeyOperation(rules, call.operation);
    // validate: the caller's values checked and normalised for the operation (lookup-query.ts)
    const query = buildQuery(call.operation, call.args);
    // replay: only a request with an Idempotency-Key pays for it, before price, so a retry is
    // answered even when the account has since run out of credit or its key's cap is spent.
    // The key's record is read now unless the record is in the record cache: such an answer asks
    // no provider and costs nothing to make, so its key is claimed in the debit's transaction
    // without a read first (issue 35: one statement fewer), and its record is read only when the
    // claim finds the key taken (LookupCharging.debit), the answer is free, or the price refuses.
    // Any other lookup reads the record first: a retry never reaches a paid upstream.
    const idempotencyKey = checkIdempotencyKey(request.idempotencyKey);
    const cached = idempotencyKey !== undefined && this.charging.keepsKeyRecords ? this.deps.recordCache.peek(recordCacheKey(query)) : undefined;
    const keyUnread = cached !== undefined;
    if (idempotencyKey !== undefined && !keyUnread) {
      const found = this.charging.replay(account, query, idempotencyKey);
      const replayed = found instanceof Promise ? await found : found;
      if (replayed) return this.charging.free(account, query, request, replayed, key);
    }
    // price
    let cost: number;
    try {
      const priced = this.charging.price(account, query, rules);
      cost = priced instanceof Promise ? await priced : priced;
    } catch (refusal) {
      // A refusal (no credit left, the key's cap spent) does not refuse a retry of a paid lookup.
      if (!keyUnread || idempotencyKey === undefined || !(refusal instanceof LookupError)) throw refusal;
      const replayed = await this.charging.replay(account, query, idempotencyKey);
      if (replayed) return this.charging.free(account, query, request, replayed, key);
      throw refusal;
    }
    // answer (a record cache hit is the store's: only the chain's first provider is kept)
    const answered = keyUnread ? cached : this.answer(query);
    let record: unknown;
    let source: string;
    if (answered instanceof Promise) {
      // answer() gives a promise only from askProviders.
      const found = await (answered as Promise<Answered>);
      record = found.record;
      source = found.source;
    } else {
      record = answered;
      source = STORE_SOURCE;
    }
    // shape
    const result = this.shape(call.operation, record, request.baseUrl);
    // debit (or the free row of an answer that costs nothing)
    const idempotency = idempotencyKey === undefined ? undefined : { key: idempotencyKey, read: !keyUnread };
    return this.charging.debit(account, query, request, idempotency, result, cost, source, key);
  }

  /** An operation without a username, called without credentials: free, if the operator allows it (LookupAuthentication.admitAnonymous). */
  private async runAnonymous(call: BoundCall, request: LookupRequest): Promise<LookupOutcome> {
    await this.authentication.admitAnonymous(call, request);
    const query = buildQuery(call.operation, call.args);
    const answered = this.answer(query);
    const { record, source } = answered instanceof Promise ? await (answered as Promise<Answered>) : { record: answered, source: STORE_SOURCE };
    return { operation: call.operation, result: this.shape(call.operation, record, request.baseUrl), charged: 0, balance: 0, source };
  }

  /**
   * Stage "answer": the record, at once when it is cached: no promise on the common path. This is
   * the one fast path of the providers (they are plain async functions); what it may keep is what
   * the chain's first provider marked cacheable.
   */
  private answer(query: LookupQuery): unknown {
    // A plain value is a record cache hit; a promise is an Answered (record and source).
    const cached = this.deps.recordCache.peek(recordCacheKey(query));
    if (cached !== undefined) return cached;
    return this.askProviders(query);
  }

  /** Asks the providers in order; keeps a cacheable answer of the first one (see findRecord). */
  private async askProviders(query: LookupQuery): Promise<Answered> {
    const providers = this.deps.providersFor(query.operation);
    const mark = this.deps.recordCache.mark();
    let unavailable: string | undefined;
    for (const [i, provider] of providers.entries()) {
      const answer = await provider.find(query);
      if (answer.status === 'found') {
        const source = provenanceOf(answer);
        if (i > 0 || answer.cacheable !== true) return { record: answer.record, source };
        // Frozen: the cached object is shared by every later answer, and nothing may change it.
        const record = deepFreeze(answer.record);
        this.deps.recordCache.set(recordCacheKey(query), record, mark);
        return { record, source };
      }
      if (answer.status === 'unavailable') unavailable ??= answer.reason;
    }
    const op = query.operation;
    if (unavailable !== undefined) {
      throw new LookupError('UPSTREAM_UNAVAILABLE', MESSAGES.temporarilyUnavailable(op.label));
    }
    // A source that lists only what it has (CheckStolen's register): not listed is an answer.
    const absent = codecOf(op.resultType).recordWhenAbsent?.();
    if (absent !== undefined) return { record: absent, source: STORE_SOURCE };
    throw new LookupError('NOT_FOUND', MESSAGES.lookupFailed(op.label));
  }

  /**
   * Stage "shape": the result of a record for an operation and base URL (the mapping itself is
   * the result type's codec, src/results/). A deep-frozen record (the local store's
   * cached records are) is shaped once: the result is frozen too and the same object is returned
   * for every later lookup of it, so protocol adapters can keep its encoding (result-memo.ts).
   */
  private shape(op: OperationDeclaration, record: unknown, baseUrl: string): LookupResult {
    if (record === null || typeof record !== 'object' || !Object.isFrozen(record)) return resultOf(op.resultType, record, { operation: op, baseUrl });
    return this.shaped.get(record, `${op.name}\u0000${baseUrl}`, () => {
      const result = resultOf(op.resultType, record, { operation: op, baseUrl });
      Object.freeze(result.value);
      return Object.freeze(result);
    });
  }
}

/** A record the providers answered and the source that gave it (the ledger's `source`, X-Lookup-Source). */
interface Answered {
  readonly record: unknown;
  readonly source: string;
}

/** Stage "resolve": the operation and arguments the adapter resolved, or its refusal raised now. */
function resolve(request: LookupRequest): BoundCall {
  const { call } = request;
  if ('refusal' in call) throw call.refusal;
  return call;
}

/**
 * By operation, not by dataset: operations sharing a dataset may answer one key with different
 * records (a CheckUKMinimal answer of the original kept for that operation beside the Check one,
 * RecordRepository.findAnswer), so one operation's cached record must never answer another.
 */
function recordCacheKey(query: LookupQuery): string {
  return `${query.operation.name}\u0000${query.key}`;
}

/**
 * The one mapping of a lost or refused store connection (a database restart, failover, a dropped
 * connection; isStoreUnavailable) for every binding: the interface's "temporarily unavailable"
 * answer (UPSTREAM_UNAVAILABLE, which JSON_ERRORS, SOAP_ERRORS and HTTP_ERRORS each map), not an
 * internal error. It costs nothing: a debit that failed so was rolled back, or its outcome was
 * settled before it failed (Storage.transaction's `knownOutcome`, issue 31).
 */
function storeFailureAsUnavailable(error: unknown, request: LookupRequest): unknown {
  if (error instanceof LookupError || !isStoreUnavailable(error)) return error;
  return new LookupError('UPSTREAM_UNAVAILABLE', MESSAGES.temporarilyUnavailable(request.call.operation?.label ?? 'This'), { cause: error });
}
