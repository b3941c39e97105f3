import type { Account } from '../accounts/account.js';
import type { AccountCache } from '../accounts/account-cache.js';
import { matchApiKey } from '../accounts/api-key.js';
import { Catalogue } from '../catalogue/catalogue.js';
import type { RateDecision, RateLimiter } from '../rate-limit/rate-limiter.js';
import type { Clock } from '../shared/clock.js';
import type { MaybePromise } from '../shared/maybe-promise.js';
import { LookupError, MESSAGES } from './lookup-error.js';
import type { AnonymousAccess, BasicCredentials, BoundCall, LookupAuth, LookupObserver, LookupRequest } from './lookup-request.js';

/** The refusal of an operation without a username called with no credentials (and not open to anonymous callers). */
export const CREDENTIALS_REQUIRED = "This operation needs the account's credentials (HTTP Basic with your username and API key)";

/**
 * What `authenticate` answers for an operation without a username called without credentials:
 * no account, so the call may only be answered anonymously (`admitAnonymous`).
 */
export const ANONYMOUS = Symbol('anonymous caller');

/** What the authentication stages need from the pipeline's dependencies (LookupPipelineDeps). */
export interface LookupAuthenticationDeps {
  readonly accounts: AccountCache;
  readonly clock: Clock;
  readonly requireApiKeyEverywhere: boolean;
  readonly observer?: LookupObserver;
  readonly rateLimiter?: RateLimiter;
  readonly onKeyUsed?: (keyId: number, nowMs: number) => void;
  readonly anonymous?: AnonymousAccess;
}

/**
 * The pipeline's stages "authenticate" and "rate limit" (lookup-pipeline.ts): who is calling, and
 * whether they may call now. Each answers at once when the account is cached (MaybePromise), so a
 * warm lookup awaits nothing here.
 */
export class LookupAuthentication {
  constructor(private readonly deps: LookupAuthenticationDeps) {}

  /**
   * Stage "authenticate": the account, at once when it is cached; throws (or rejects) UNAUTHORIZED.
   * `named` is the call the XML bindings resolved before authenticating (they name the account in
   * it); the JSON interface and the console authenticate before resolving (`undefined`).
   * ANONYMOUS for an XML call of an operation without a username that sent no Basic credentials.
   */
  authenticate(auth: LookupAuth, named: BoundCall | undefined): MaybePromise<Account> | typeof ANONYMOUS {
    if (auth.mode === 'session') return this.bySession(auth.username);
    if (auth.mode === 'api-key' || named === undefined) return this.byKey(auth.basic);
    if (!Catalogue.takesUsername(named.operation)) {
      // No username to charge (CheckStolen...): the Basic credentials name the account, or the call is anonymous.
      return auth.basic === undefined ? ANONYMOUS : this.byKey(auth.basic);
    }
    return this.byUsername(named.args.username, auth.basic);
  }

  /**
   * Stage "rate limit": counts the request against the account's rate limits (issue 5). Before
   * anything that costs: a refused request reads no data, asks no upstream and debits nothing.
   */
  rateLimit(account: Account, request: LookupRequest): Promise<void> | undefined {
    const decision = this.deps.rateLimiter?.check(account);
    // Accounts without limits (the default) get a plain value: nothing to await on the hot path.
    if (decision instanceof Promise) return decision.then((d) => { this.refuseIfLimited(d, account, request); });
    if (decision) this.refuseIfLimited(decision, account, request);
    return undefined;
  }

  /**
   * An operation without a username called without credentials: answered only when the operator
   * opened it to anonymous callers (ANONYMOUS_OPERATIONS), free, and rate-limited per client
   * address. Nothing here names an account, so no credit can move. A call that sent any
   * Authorization header is never anonymous: wrong credentials are refused, not ignored.
   */
  async admitAnonymous(call: BoundCall, request: LookupRequest): Promise<void> {
    const caller = request.caller;
    const anonymous = this.deps.anonymous;
    if (caller === undefined || caller.sentAuthorization || anonymous?.operations.has(call.operation.name) !== true) {
      throw new LookupError('UNAUTHORIZED', caller?.sentAuthorization === true ? 'Invalid username or API key' : CREDENTIALS_REQUIRED);
    }
    const decision = this.deps.rateLimiter?.checkAnonymous(caller.address, anonymous.limits);
    const settled = decision instanceof Promise ? await decision : decision;
    if (settled && !settled.allowed) {
      this.deps.observer?.onRateLimited?.({ window: settled.window, interface: request.interface });
      throw new LookupError('RATE_LIMITED', MESSAGES.anonymousRateLimited(settled.limit, settled.window, settled.retryAfterSeconds), {
        retryAfterSeconds: settled.retryAfterSeconds,
      });
    }
  }

  /** The account of a console session: its user logged in, so no key is asked; a disabled account is still refused. */
  private bySession(username: string): MaybePromise<Account> {
    const check = (account: Account | undefined): Account => {
      if (!account) throw new LookupError('UNAUTHORIZED', MESSAGES.usernameIncorrect);
      return this.ensureEnabled(account);
    };
    const found = this.deps.accounts.find(username);
    return found instanceof Promise ? found.then(check) : check(found);
  }

  private byKey(basic: BasicCredentials | undefined): MaybePromise<Account> {
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
    const clock = this.deps.clock;
    const ms = clock.millis ? clock.millis() : clock.now().getTime();
    const keyId = matchApiKey(apiKey, account.apiKeys, ms);
    if (keyId === undefined) return false;
    this.deps.onKeyUsed?.(keyId, ms);
    return true;
  }

  private byUsername(username: string | undefined, basic: BasicCredentials | undefined): MaybePromise<Account> {
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
}
