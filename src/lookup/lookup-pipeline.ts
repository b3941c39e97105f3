import type { Account } from '../accounts/account.js';
import type { AccountCache } from '../accounts/account-cache.js';
import { matchApiKey } from '../accounts/api-key.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { OperationDeclaration } from '../catalogue/operation.js';
import type { DebitBatcher } from '../credits/debit-batcher.js';
import type { TestPlates } from '../datasets/test-plates.js';
import type { Provider, ProviderAnswer } from '../providers/provider.js';
import type { RateDecision, RateLimiter, RateWindow } from '../rate-limit/rate-limiter.js';
import type { Clock } from '../shared/clock.js';
import { PerObjectMemo } from '../shared/per-object-memo.js';
import { withImageUrl } from './image-url.js';
import { LookupError, MESSAGES } from './lookup-error.js';
import { buildQuery, describeQuery, type LookupQuery, type RawArguments } from './lookup-query.js';
import type { LookupResult, MotDocument, NcapRating, VehicleDocument } from './lookup-result.js';

/**
 * How the caller proved who it is.
 * - `api-key`: HTTP Basic username + API key (the JSON interface).
 * - `username-parameter`: the `username` parameter of the XML bindings, plus the Basic credentials
 *   if the client sent them (required when the account or the operator says so).
 */
export type LookupAuth =
  | { readonly mode: 'api-key'; readonly basic: BasicCredentials | undefined }
  | { readonly mode: 'username-parameter'; readonly basic: BasicCredentials | undefined };

export interface BasicCredentials {
  readonly username: string;
  readonly apiKey: string;
}

/** One lookup as a protocol adapter hands it over. Nothing here is HTTP or XML. */
export interface LookupRequest {
  readonly operationName: string;
  /**
   * Maps the wire input to parameter values once the operation is known. Throws LookupError
   * (INVALID_INPUT) when the input has the wrong shape for the operation.
   */
  readonly bind: (op: OperationDeclaration) => RawArguments;
  readonly auth: LookupAuth;
  /** `json`, `soap11`, `soap12`, `http-get`, `http-post`: recorded in the ledger and metrics. */
  readonly interface: string;
  readonly requestId: string;
  /** Public base URL (no trailing slash) for absolute links such as ImageUrl. */
  readonly baseUrl: string;
}

export interface LookupOutcome {
  readonly operation: OperationDeclaration;
  readonly result: LookupResult;
  /** Credits debited (0 for test plates and empty rating searches). */
  readonly charged: number;
  readonly balance: number;
}

/** Told about every finished lookup; metrics implement it. */
export interface LookupObserver {
  onLookup(event: { operation: string; interface: string; outcome: string; seconds: number; charged: number }): void;
  /** A request refused by the account's rate limit (it is also reported to onLookup). */
  onRateLimited?(event: { window: RateWindow; interface: string }): void;
}

export interface LookupPipelineDeps {
  readonly catalogue: Catalogue;
  readonly accounts: AccountCache;
  readonly debits: DebitBatcher;
  readonly testPlates: TestPlates;
  /** The providers asked, in order, for an operation. */
  readonly providersFor: (op: OperationDeclaration) => readonly Provider[];
  readonly clock: Clock;
  /** Operator setting: the XML bindings require the API key for every account. */
  readonly requireApiKeyEverywhere: boolean;
  readonly observer?: LookupObserver;
  /** Called as each lookup starts, before any cache is consulted (refreshes the change snapshot). */
  readonly onLookupStart?: () => void;
  /** Per-account rate limits, checked right after authentication; none when absent. */
  readonly rateLimiter?: RateLimiter;
  /** Told which API key authenticated a lookup (KeyUsageRecorder: last_used_at, off the hot path). */
  readonly onKeyUsed?: (keyId: number, nowMs: number) => void;
}

/**
 * authenticate -> validate and normalise -> providers -> debit atomically -> result
 * (DESIGN.md "Shape"). Credits move only after data was found, in one conditional update with its
 * ledger row; every failure before that costs nothing.
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
    let operationName = request.operationName;
    try {
      const outcome = await this.run(request);
      operationName = outcome.operation.name;
      this.deps.observer?.onLookup({
        operation: operationName,
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
        operation: this.deps.catalogue.find(operationName) ? operationName : 'unknown',
        interface: request.interface,
        outcome: code.toLowerCase(),
        seconds: (performance.now() - started) / 1000,
        charged: 0,
      });
      throw error;
    }
  }

  private async run(request: LookupRequest): Promise<LookupOutcome> {
    // The JSON interface answers 401 before anything else, whatever the method.
    // The caches answer without a promise on the common path; awaiting a plain value would still
    // cost a turn of the microtask queue, so only promises are awaited.
    let account: Account | undefined;
    if (request.auth.mode === 'api-key') {
      const authenticated = this.authenticateByKey(request.auth.basic);
      account = authenticated instanceof Promise ? await authenticated : authenticated;
    }
    if (account) {
      const limited = this.enforceRateLimit(account, request);
      if (limited) await limited;
    }
    const op = this.resolve(request.operationName);
    const raw = request.bind(op);
    if (!account) {
      const authenticated = this.authenticateByUsername(raw.username, request.auth.basic);
      account = authenticated instanceof Promise ? await authenticated : authenticated;
      const limited = this.enforceRateLimit(account, request);
      if (limited) await limited;
    }

    const query = buildQuery(op, raw);
    const testPlate = this.deps.testPlates.isTestPlate(op.name, query.key);
    const cost = (testPlate instanceof Promise ? await testPlate : testPlate) ? 0 : op.cost;
    // Checked before asking the providers so an empty account does not spend upstream quota; the
    // cached balance may be stale, so a refusal is confirmed from the store. The debit below is
    // the authoritative check.
    if (account.credits < cost) {
      const current = (await this.deps.accounts.reload(account.username))?.credits ?? 0;
      if (current < cost) throw new LookupError('INSUFFICIENT_CREDITS', MESSAGES.outOfCredit(cost, current));
    }

    const record = this.findRecord(query);
    const found: unknown = record instanceof Promise ? await (record as Promise<unknown>) : record;
    const result = this.shape(op, found, request.baseUrl);
    const charge = result.type === 'ArrayOfPreAssessmentSearchResult' && result.ratings.length === 0 ? 0 : cost;
    if (charge === 0) return { operation: op, result, charged: 0, balance: account.credits };

    const balance = await this.deps.debits.debit(account.id, charge, {
      operation: op.name,
      interface: request.interface,
      query: describeQuery(query),
      requestId: request.requestId,
      createdAt: this.nowIso(),
    });
    if (balance === undefined) {
      const current = (await this.deps.accounts.reload(account.username))?.credits ?? 0;
      throw new LookupError('INSUFFICIENT_CREDITS', MESSAGES.outOfCredit(charge, current));
    }
    this.deps.accounts.noteBalance(account.username, balance);
    return { operation: op, result, charged: charge, balance };
  }

  /** The clock's time as ISO 8601, formatted once per millisecond (lookups under load share one). */
  private nowIso(): string {
    const ms = this.nowMs();
    if (ms !== this.lastIso.ms) this.lastIso = { ms, iso: new Date(ms).toISOString() };
    return this.lastIso.iso;
  }

  private resolve(name: string): OperationDeclaration {
    const op = this.deps.catalogue.find(name);
    if (op) return op;
    const near = this.deps.catalogue.findIgnoringCase(name);
    const shown = name.length > 64 ? `${name.slice(0, 64)}...` : name;
    throw new LookupError(
      'UNKNOWN_OPERATION',
      near
        ? `Unknown method ${shown}: method names are case sensitive; did you mean ${near.name}?`
        : `Unknown method ${shown}`,
    );
  }

  /** The account, at once when it is cached; throws (or rejects) UNAUTHORIZED. */
  private authenticateByKey(basic: BasicCredentials | undefined): Account | Promise<Account> {
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

  /** The account, at once when it is cached; throws (or rejects) UNAUTHORIZED. */
  private authenticateByUsername(username: string | undefined, basic: BasicCredentials | undefined): Account | Promise<Account> {
    const name = username?.trim() ?? '';
    if (name === '') throw new LookupError('UNAUTHORIZED', MESSAGES.usernameIncorrect);
    const found = this.deps.accounts.find(name);
    return found instanceof Promise ? found.then((account) => this.checkUsernameAccount(account, basic)) : this.checkUsernameAccount(found, basic);
  }

  private checkUsernameAccount(account: Account | undefined, basic: BasicCredentials | undefined): Account {
    if (!account) throw new LookupError('UNAUTHORIZED', MESSAGES.usernameIncorrect);
    if (account.requireApiKey || this.deps.requireApiKeyEverywhere) {
      if (!basic || basic.username !== account.username || !this.liveKeyMatches(account, basic.apiKey)) {
        throw new LookupError('UNAUTHORIZED', `${MESSAGES.usernameIncorrect} or its API key is missing: this account requires HTTP Basic authentication with its API key`);
      }
    }
    return this.ensureEnabled(account);
  }

  /**
   * Counts the request against the account's rate limits (issue 5). Before anything that costs:
   * a refused request reads no data, asks no upstream and debits nothing.
   */
  private enforceRateLimit(account: Account, request: LookupRequest): Promise<void> | undefined {
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

  /** The record, at once when the first provider has it at hand (a cached record). */
  private findRecord(query: LookupQuery): unknown {
    const providers = this.deps.providersFor(query.operation);
    const first = providers[0]?.find(query);
    if (first !== undefined && !(first instanceof Promise) && first.status === 'found') return first.record;
    return this.askProviders(query, providers, first);
  }

  /** Asks the providers in order; `first` is the first one's answer when already asked. */
  private async askProviders(query: LookupQuery, providers: readonly Provider[], first: ProviderAnswer | Promise<ProviderAnswer> | undefined): Promise<unknown> {
    let unavailable: string | undefined;
    for (const [i, provider] of providers.entries()) {
      const answer = i === 0 && first !== undefined ? await first : await provider.find(query);
      if (answer.status === 'found') return answer.record;
      if (answer.status === 'unavailable') unavailable ??= answer.reason;
    }
    const op = query.operation;
    if (unavailable !== undefined) {
      throw new LookupError('UPSTREAM_UNAVAILABLE', `${op.label} lookup is temporarily unavailable, please try again later`);
    }
    const what = op.dataset.kind === 'mot' ? 'no MOT history found for' : 'no vehicle found for';
    throw new LookupError('NOT_FOUND', MESSAGES.lookupFailed(op.label, `${what} ${query.key.replaceAll('|', ' ')}`));
  }

  /**
   * The result of a record for an operation and base URL. A deep-frozen record (the local store's
   * cached records are) is shaped once: the result is frozen too and the same object is returned
   * for every later lookup of it, so protocol adapters can keep its encoding (result-memo.ts).
   */
  private shape(op: OperationDeclaration, record: unknown, baseUrl: string): LookupResult {
    if (record === null || typeof record !== 'object' || !Object.isFrozen(record)) return shapeRecord(op, record, baseUrl);
    return this.shaped.get(record, `${op.name}\u0000${baseUrl}`, () => {
      const result = shapeRecord(op, record, baseUrl);
      if (result.type === 'Vehicle') Object.freeze(result.vehicle);
      return Object.freeze(result);
    });
  }
}

function shapeRecord(op: OperationDeclaration, record: unknown, baseUrl: string): LookupResult {
  switch (op.resultType) {
    case 'Vehicle': {
      let vehicle = record as VehicleDocument;
      if (op.fieldSubset) {
        const keep = new Set([...op.fieldSubset, 'ImageUrl']);
        vehicle = Object.fromEntries(Object.entries(vehicle).filter(([k]) => keep.has(k)));
      }
      return { type: 'Vehicle', vehicle: withImageUrl(vehicle, baseUrl) };
    }
    case 'UKMOTData':
      return { type: 'UKMOTData', mot: record as MotDocument };
    case 'ArrayOfPreAssessmentSearchResult':
      return { type: 'ArrayOfPreAssessmentSearchResult', ratings: record as NcapRating[] };
  }
}
