import type { Account } from '../accounts/account.js';
import type { AccountCache } from '../accounts/account-cache.js';
import { matchApiKey } from '../accounts/api-key.js';
import { Catalogue } from '../catalogue/catalogue.js';
import type { OperationDeclaration } from '../catalogue/operation.js';
import type { FreeLookupDetails } from '../credits/credit-ledger.repository.js';
import type { DebitBatcher } from '../credits/debit-batcher.js';
import { KEY_TAKEN, type DebitResult } from '../credits/debit-writer.js';
import type { TestPlates } from '../datasets/test-plates.js';
import type { Provider } from './provider.js';
import type { EffectiveLimits, RateDecision, RateLimiter, RateWindow } from '../rate-limit/rate-limiter.js';
import type { Clock } from '../shared/clock.js';
import type { FreeReason } from '../storage/database.js';
import type { MaybePromise } from '../shared/maybe-promise.js';
import { deepFreeze } from '../shared/deep-freeze.js';
import { PerObjectMemo } from '../shared/per-object-memo.js';
import type { VersionedCache } from '../shared/versioned-cache.js';
import { checkIdempotencyKey, type IdempotentReplays } from './idempotent-replay.js';
import { LookupError, MESSAGES } from './lookup-error.js';
import { buildQuery, describeQuery, type LookupQuery, type RawArguments } from './lookup-query.js';
import { codecOf, isChargeable, resultOf } from '../results/index.js';
import type { LookupResult } from '../results/result-documents.js';

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
  | { readonly mode: 'session'; readonly username: string };

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
}

/** The caller as the XML bindings see it, for anonymous calls (README "Operations without a username"). */
export interface CallerInfo {
  /** The client address the anonymous rate limit counts by. */
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

/** The refusal of an operation without a username called with no credentials (and not open to anonymous callers). */
export const CREDENTIALS_REQUIRED = "This operation needs the account's credentials (HTTP Basic with your username and API key)";

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
}

/** Told about every finished lookup; metrics implement it. */
export interface LookupObserver {
  onLookup(event: { operation: string; interface: string; outcome: string; seconds: number; charged: number }): void;
  /** A request refused by the account's rate limit (it is also reported to onLookup). */
  onRateLimited?(event: { window: RateWindow; interface: string }): void;
  /** A free lookup answered although its ledger row could not be written (see LookupPipeline.free). */
  onFreeRowLost?(event: { interface: string; reason: FreeReason }): void;
}

export interface LookupPipelineDeps {
  readonly accounts: AccountCache;
  readonly debits: DebitBatcher;
  readonly testPlates: TestPlates;
  /** The providers asked, in order, for an operation. */
  readonly providersFor: (op: OperationDeclaration) => readonly Provider[];
  /**
   * Records the first provider of a chain called cacheable, deep-frozen, by dataset and key
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
  /** Told which API key authenticated a lookup (KeyUsageRecorder: last_used_at, off the hot path). */
  readonly onKeyUsed?: (keyId: number, nowMs: number) => void;
  /** Operations anonymous callers may use (free, limited per address); none when absent. */
  readonly anonymous?: AnonymousAccess;
}

/**
 * One lookup as named stages (docs/architecture.md; DESIGN.md "Shape"):
 * authenticate -> rate limit -> resolve -> validate -> price -> answer -> shape -> debit.
 * Credits move only after data was found and shaped, in one conditional update with its ledger
 * row; every failure before that costs nothing. A found answer that costs nothing (test plate,
 * nothing to charge, Idempotency-Key replay) gets a ledger row of kind `free` instead (`free`).
 *
 * The sync path: a stage whose cache has the answer (the account, the test plates, the record: all
 * VersionedCache) returns it as a plain value, and `run` awaits only promises. Awaiting a plain
 * value would still cost a microtask turn per stage, and a promise-returning stage a promise per
 * request; bench:json and bench:soap measure this path, so keep it.
 */
export class LookupPipeline {
  /** Results of deep-frozen records, by record, then operation and base URL (see shape). */
  private readonly shaped = new PerObjectMemo<object, LookupResult>(
    // Operations sharing a dataset times base URLs; the base URL comes from the Host header when
    // BASE_URL is unset, so this bound keeps a caller varying it from growing the memory.
    16,
  );
  private lastIso = { ms: Number.NaN, iso: '' };

  constructor(private readonly deps: LookupPipelineDeps) {}

  /**
   * Runs one lookup. Call it from a request handler (an I/O callback): the caches' view of other
   * processes' changes is shared per turn of the event loop (ChangeSnapshot).
   */
  async execute(request: LookupRequest): Promise<LookupOutcome> {
    const started = performance.now();
    this.deps.onLookupStart?.();
    try {
      const outcome = await this.run(request);
      this.deps.observer?.onLookup({
        operation: outcome.operation.name,
        interface: request.interface,
        outcome: 'success',
        seconds: (performance.now() - started) / 1000,
        charged: outcome.charged,
      });
      return outcome;
    } catch (error) {
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
    }
  }

  /** The stages in order; only promises are awaited (see the class comment). */
  private async run(request: LookupRequest): Promise<LookupOutcome> {
    let account: Account;
    let call: BoundCall;
    if (request.auth.mode === 'api-key' || request.auth.mode === 'session') {
      // The JSON interface answers 401 before anything else, whatever the method.
      const authenticated = this.authenticate(request.auth, undefined);
      account = authenticated instanceof Promise ? await authenticated : authenticated;
      const limited = this.rateLimit(account, request);
      if (limited) await limited;
      call = this.resolve(request);
    } else {
      // The XML bindings name the account in a parameter of the call.
      call = this.resolve(request);
      if (!Catalogue.takesUsername(call.operation)) {
        // No username to charge (CheckStolen...): the Basic credentials name the account, or the call is anonymous.
        const basic = request.auth.basic;
        if (basic === undefined) return this.runAnonymous(call, request);
        const authenticated = this.authenticateByKey(basic);
        account = authenticated instanceof Promise ? await authenticated : authenticated;
        const limited = this.rateLimit(account, request);
        if (limited) await limited;
        return this.charged(account, call, request);
      }
      const authenticated = this.authenticate(request.auth, call.args.username);
      account = authenticated instanceof Promise ? await authenticated : authenticated;
      const limited = this.rateLimit(account, request);
      if (limited) await limited;
    }
    return this.charged(account, call, request);
  }

  /** validate -> price -> answer -> shape -> debit, for an authenticated account. */
  private async charged(account: Account, call: BoundCall, request: LookupRequest): Promise<LookupOutcome> {
    const query = this.validate(call);
    // Stage "replay": only a request with an Idempotency-Key pays its query (before price, so a
    // retry is answered even when the account has since run out of credit).
    const idempotencyKey = checkIdempotencyKey(request.idempotencyKey);
    if (idempotencyKey !== undefined) {
      const replayed = await this.replay(account, query, idempotencyKey);
      if (replayed) return this.free(account, query, request, replayed);
    }
    const priced = this.price(account, query);
    const cost = priced instanceof Promise ? await priced : priced;
    const answered = this.answer(query);
    const record: unknown = answered instanceof Promise ? await answered : answered;
    const result = this.shape(call.operation, record, request.baseUrl);
    const charge = isChargeable(result) ? cost : 0;
    if (charge === 0) {
      // Operation costs are at least 1 (catalogue, OPERATION_COSTS): a price of 0 is a test plate.
      const free: FreeReason = cost === 0 ? 'test-plate' : 'no-result';
      return this.free(account, query, request, { operation: call.operation, result, charged: 0, balance: account.credits, free });
    }
    // Awaited here rather than in a debit() of its own: an async stage would add a promise to
    // every charged lookup.
    const balance = await this.debit(account, query, charge, request, idempotencyKey, result);
    if (balance === KEY_TAKEN) return this.free(account, query, request, await this.replayTaken(account, query, idempotencyKey ?? ''));
    if (balance === undefined) throw await this.outOfCredit(account, charge);
    this.deps.accounts.noteBalance(account.username, balance);
    this.deps.onDebited?.(account.id, charge, balance);
    return { operation: call.operation, result, charged: charge, balance };
  }

  /**
   * An operation without a username called without credentials: answered only when the operator
   * opened it to anonymous callers (ANONYMOUS_OPERATIONS), free, and rate-limited per client
   * address. Nothing here names an account, so no credit can move. A call that sent any
   * Authorization header is never anonymous: wrong credentials are refused, not ignored.
   */
  private async runAnonymous(call: BoundCall, request: LookupRequest): Promise<LookupOutcome> {
    const op = call.operation;
    const caller = request.caller;
    if (caller === undefined || caller.sentAuthorization || this.deps.anonymous?.operations.has(op.name) !== true) {
      throw new LookupError('UNAUTHORIZED', caller?.sentAuthorization === true ? 'Invalid username or API key' : CREDENTIALS_REQUIRED);
    }
    const decision = this.deps.rateLimiter?.checkAnonymous(caller.address, this.deps.anonymous.limits);
    const settled = decision instanceof Promise ? await decision : decision;
    if (settled && !settled.allowed) {
      this.deps.observer?.onRateLimited?.({ window: settled.window, interface: request.interface });
      throw new LookupError('RATE_LIMITED', MESSAGES.anonymousRateLimited(settled.limit, settled.window, settled.retryAfterSeconds), {
        retryAfterSeconds: settled.retryAfterSeconds,
      });
    }
    const query = this.validate(call);
    const answered = this.answer(query);
    const record: unknown = answered instanceof Promise ? await answered : answered;
    return { operation: op, result: this.shape(op, record, request.baseUrl), charged: 0, balance: 0 };
  }

  /** Stage "resolve": the operation and arguments the adapter resolved, or its refusal raised now. */
  private resolve(request: LookupRequest): BoundCall {
    const { call } = request;
    if ('refusal' in call) throw call.refusal;
    return call;
  }

  /** Stage "authenticate": the account, at once when it is cached; throws (or rejects) UNAUTHORIZED. */
  private authenticate(auth: LookupAuth, username: string | undefined): MaybePromise<Account> {
    if (auth.mode === 'session') return this.authenticateSession(auth.username);
    return auth.mode === 'api-key' ? this.authenticateByKey(auth.basic) : this.authenticateByUsername(username, auth.basic);
  }

  /** The account of a console session: its user logged in, so no key is asked; a disabled account is still refused. */
  private authenticateSession(username: string): MaybePromise<Account> {
    const check = (account: Account | undefined): Account => {
      if (!account) throw new LookupError('UNAUTHORIZED', MESSAGES.usernameIncorrect);
      return this.ensureEnabled(account);
    };
    const found = this.deps.accounts.find(username);
    return found instanceof Promise ? found.then(check) : check(found);
  }

  /** Stage "validate": the caller's values checked and normalised for the operation (lookup-query.ts). */
  private validate(call: BoundCall): LookupQuery {
    return buildQuery(call.operation, call.args);
  }

  /**
   * Stage "price": what the lookup will cost (0 for a test plate), at once when the test plates are
   * loaded. Checked before asking the providers so an empty account does not spend upstream quota;
   * the cached balance may be stale, so a refusal is confirmed from the store. The debit stays the
   * authoritative check.
   */
  private price(account: Account, query: LookupQuery): MaybePromise<number> {
    const op = query.operation;
    const testPlate = this.deps.testPlates.isTestPlate(op.name, query.key);
    if (testPlate instanceof Promise) return testPlate.then((free) => this.affordable(account, free ? 0 : op.cost));
    return this.affordable(account, testPlate ? 0 : op.cost);
  }

  private affordable(account: Account, cost: number): MaybePromise<number> {
    if (account.credits >= cost) return cost;
    return this.confirmCredit(account, cost);
  }

  private async confirmCredit(account: Account, cost: number): Promise<number> {
    const current = (await this.deps.accounts.reload(account.username))?.credits ?? 0;
    if (current < cost) throw new LookupError('INSUFFICIENT_CREDITS', MESSAGES.outOfCredit(cost, current));
    return cost;
  }

  /**
   * Stage "debit": takes the credits for a found answer, in one conditional update with its ledger
   * row (group-committed: DebitBatcher), and settles after its COMMIT with the new balance, or
   * undefined when the account cannot pay. It runs after shape, so nothing of ours can fail
   * between a debit and the answer it paid for.
   */
  private debit(
    account: Account,
    query: LookupQuery,
    charge: number,
    request: LookupRequest,
    idempotencyKey: string | undefined,
    result: LookupResult,
  ): Promise<DebitResult> {
    const details = {
      operation: query.operation.name,
      interface: request.interface,
      query: describeQuery(query),
      requestId: request.requestId,
      createdAt: this.nowIso(),
    };
    if (idempotencyKey === undefined) return this.deps.debits.debit(account.id, charge, details);
    // The result is stored with the debit (DebitWriter): a retry is answered from it.
    return this.deps.debits.debit(account.id, charge, { ...details, idempotency: { key: idempotencyKey, result: JSON.stringify(result) } });
  }

  /**
   * The ledger row of a lookup of an account that cost nothing (kind `free`, delta 0, its reason),
   * group-committed with the debits (DebitBatcher.free) and awaited, so the row is in the ledger
   * by the time the client has the answer, as a debit's is. It never checks the balance: a
   * 0-credit account still gets its test plate. Only this path pays for the row; the charged path
   * is unchanged.
   *
   * If the row cannot be written (the store failed the batch), the lookup is answered anyway,
   * logged and counted (onFreeRowLost): the answer cost nothing, so no credit is lost or owed,
   * and refusing it would take from the client what it is owed for free (for a replay, the
   * answer it already paid for) to protect only the completeness of the history.
   */
  private async free(account: Account, query: LookupQuery, request: LookupRequest, outcome: LookupOutcome): Promise<LookupOutcome> {
    const reason: FreeReason = outcome.replayed ? 'replay' : (outcome.free ?? 'no-result');
    const details: FreeLookupDetails = {
      operation: query.operation.name,
      interface: request.interface,
      query: describeQuery(query),
      requestId: request.requestId,
      createdAt: this.nowIso(),
      reason,
    };
    try {
      await this.deps.debits.free(account.id, details);
    } catch (error) {
      this.deps.observer?.onFreeRowLost?.({ interface: request.interface, reason });
      this.deps.onFreeRowLost?.({ ...details, accountId: account.id }, error);
    }
    return outcome.free === reason ? outcome : { ...outcome, free: reason };
  }

  /**
   * Stage "replay": the stored answer of an earlier charged lookup with this Idempotency-Key, same
   * account and query (charged 0 now); undefined when there is none; IDEMPOTENCY_CONFLICT when
   * the key was used for another query.
   */
  private async replay(account: Account, query: LookupQuery, key: string): Promise<LookupOutcome | undefined> {
    const replays = this.deps.replays;
    if (!replays) throw new LookupError('INVALID_INPUT', 'Idempotency-Key is not supported by this server');
    const found = await replays.find(account.id, key, query.operation.name, describeQuery(query));
    if (!found) return undefined;
    return { operation: query.operation, result: found.result, charged: 0, balance: account.credits, replayed: true };
  }

  /**
   * A debit not made because another lookup with the same key committed first (a race, or a
   * retry that overtook its original): that lookup's answer, read after our COMMIT.
   */
  private async replayTaken(account: Account, query: LookupQuery, key: string): Promise<LookupOutcome> {
    const replayed = await this.replay(account, query, key);
    // The record was live inside our transaction; it cannot have gone since but by a purge.
    if (!replayed) throw new Error(`the idempotency record of a taken key vanished (account ${account.id})`);
    return replayed;
  }

  /** The refusal of a debit the account could not pay, with its balance as the store has it. */
  private async outOfCredit(account: Account, charge: number): Promise<LookupError> {
    const current = (await this.deps.accounts.reload(account.username))?.credits ?? 0;
    return new LookupError('INSUFFICIENT_CREDITS', MESSAGES.outOfCredit(charge, current));
  }

  /** The clock's time as ISO 8601, formatted once per millisecond (lookups under load share one). */
  private nowIso(): string {
    const ms = this.nowMs();
    if (ms !== this.lastIso.ms) this.lastIso = { ms, iso: new Date(ms).toISOString() };
    return this.lastIso.iso;
  }

  private authenticateByKey(basic: BasicCredentials | undefined): MaybePromise<Account> {
    if (!basic) throw new LookupError('UNAUTHORIZED', 'Authentication required: HTTP Basic with your username and API key');
    const found = this.deps.accounts.find(basic.username);
    return found instanceof Promise ? found.then((account) => this.checkKey(account, basic)) : this.checkKey(found, basic);
  }

  private checkKey(account: Account | undefined, basic: BasicCredentials): Account {
    if (!account || !this.liveKeyMatches(account, basic.apiKey)) {
      throw new LookupError('UNAUTHORIZED', 'Invalid username or API key');
    }
    return this.ensureEnabled(account);
  }

  /** Whether `apiKey` is any live key of the account (issue 16: several keys, rolled keys in grace). */
  private liveKeyMatches(account: Account, apiKey: string): boolean {
    const ms = this.nowMs();
    const keyId = matchApiKey(apiKey, account.apiKeys, ms);
    if (keyId === undefined) return false;
    this.deps.onKeyUsed?.(keyId, ms);
    return true;
  }

  private nowMs(): number {
    const clock = this.deps.clock;
    return clock.millis ? clock.millis() : clock.now().getTime();
  }

  private authenticateByUsername(username: string | undefined, basic: BasicCredentials | undefined): MaybePromise<Account> {
    const name = username?.trim() ?? '';
    if (name === '') throw new LookupError('UNAUTHORIZED', MESSAGES.usernameIncorrect);
    const found = this.deps.accounts.find(name);
    return found instanceof Promise ? found.then((account) => this.checkUsernameAccount(account, basic)) : this.checkUsernameAccount(found, basic);
  }

  /**
   * Issue 17 item 10: the answer must not tell a stranger which usernames exist or what state they
   * are in. An unknown name gets the original's "Your username is incorrect"; so does an account
   * that requires its API key or is disabled, unless the caller sent that account's correct key
   * (then it may know the precise reason). Not configurable: a client that wants the reason has it
   * by sending its key. The key is only checked when the account's state needs it, so the common
   * case (an enabled account that takes the username alone) hashes nothing.
   */
  private checkUsernameAccount(account: Account | undefined, basic: BasicCredentials | undefined): Account {
    if (!account) throw new LookupError('UNAUTHORIZED', MESSAGES.usernameIncorrect);
    const keyRequired = account.requireApiKey || this.deps.requireApiKeyEverywhere;
    if (!keyRequired && !account.disabled) return account;
    // Any live key of the account counts (issue 16: several keys, a rolled key in its grace period).
    const keyed = basic !== undefined && basic.username === account.username && this.liveKeyMatches(account, basic.apiKey);
    // The code still says why (metrics); the message is the unknown name's.
    if (!keyed && account.disabled) throw new LookupError('ACCOUNT_DISABLED', MESSAGES.usernameIncorrect);
    if (!keyed) throw new LookupError('UNAUTHORIZED', MESSAGES.usernameIncorrect);
    return this.ensureEnabled(account);
  }

  /**
   * Stage "rate limit": counts the request against the account's rate limits (issue 5). Before
   * anything that costs: a refused request reads no data, asks no upstream and debits nothing.
   */
  private rateLimit(account: Account, request: LookupRequest): Promise<void> | undefined {
    const decision = this.deps.rateLimiter?.check(account);
    // Accounts without limits (the default) get a plain value: nothing to await on the hot path.
    if (decision instanceof Promise) return decision.then((d) => { this.refuseIfLimited(d, account, request); });
    if (decision) this.refuseIfLimited(decision, account, request);
    return undefined;
  }

  private refuseIfLimited(decision: RateDecision, account: Account, request: LookupRequest): void {
    if (decision.allowed) return;
    this.deps.observer?.onRateLimited?.({ window: decision.window, interface: request.interface });
    throw new LookupError('RATE_LIMITED', MESSAGES.rateLimited(account.username, decision.limit, decision.window, decision.retryAfterSeconds), {
      retryAfterSeconds: decision.retryAfterSeconds,
    });
  }

  private ensureEnabled(account: Account): Account {
    if (account.disabled) throw new LookupError('ACCOUNT_DISABLED', `Account ${account.username} is disabled`);
    return account;
  }

  /**
   * Stage "answer": the record, at once when it is cached: no promise on the common path. This is
   * the one fast path of the providers (they are plain async functions); what it may keep is what
   * the chain's first provider marked cacheable.
   */
  private answer(query: LookupQuery): unknown {
    const cached = this.deps.recordCache.peek(recordCacheKey(query));
    if (cached !== undefined) return cached;
    return this.askProviders(query);
  }

  /** Asks the providers in order; keeps a cacheable answer of the first one (see findRecord). */
  private async askProviders(query: LookupQuery): Promise<unknown> {
    const providers = this.deps.providersFor(query.operation);
    const mark = this.deps.recordCache.mark();
    let unavailable: string | undefined;
    for (const [i, provider] of providers.entries()) {
      const answer = await provider.find(query);
      if (answer.status === 'found') {
        if (i > 0 || answer.cacheable !== true) return answer.record;
        // Frozen: the cached object is shared by every later answer, and nothing may change it.
        const record = deepFreeze(answer.record);
        this.deps.recordCache.set(recordCacheKey(query), record, mark);
        return record;
      }
      if (answer.status === 'unavailable') unavailable ??= answer.reason;
    }
    const op = query.operation;
    if (unavailable !== undefined) {
      throw new LookupError('UPSTREAM_UNAVAILABLE', `${op.label} lookup is temporarily unavailable, please try again later`);
    }
    // A source that lists only what it has (CheckStolen's register): not listed is an answer.
    const absent = codecOf(op.resultType).recordWhenAbsent?.();
    if (absent !== undefined) return absent;
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

/** Operations sharing a dataset share its records (CheckAustralia and CheckAustraliaExtensive). */
function recordCacheKey(query: LookupQuery): string {
  return `${query.operation.dataset.name}\u0000${query.key}`;
}
