import type { Account } from '../accounts/account.js';
import type { AccountCache } from '../accounts/account-cache.js';
import { matchApiKey, type LiveKey } from '../accounts/api-key.js';
import type { KeyRules } from '../accounts/key-rules.js';
import type { OperationDeclaration } from '../catalogue/operation.js';
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

/** Who a lookup is for: the account, and the API key that authenticated it (none: username alone, or the console). */
export interface Authenticated {
  readonly account: Account;
  readonly key: LiveKey | undefined;
}

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
  authenticate(auth: LookupAuth, named: BoundCall | undefined): MaybePromise<Authenticated> | typeof ANONYMOUS {
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
  rateLimit(account: Account, request: LookupRequest, rules?: KeyRules): Promise<void> | undefined {
    const decision = this.deps.rateLimiter?.check(account);
    // Accounts without limits (the default) get a plain value: nothing to await on the hot path.
    if (decision instanceof Promise) {
      return decision.then((d) => {
        this.refuseIfLimited(d, account, request);
        return rules === undefined ? undefined : this.keyRateLimit(rules, request);
      });
    }
    if (decision) this.refuseIfLimited(decision, account, request);
    return rules === undefined ? undefined : this.keyRateLimit(rules, request);
  }

  /**
   * A key's own rules that do not depend on the operation (issue 33), before its rate limits
   * count the request: its allowed client addresses. Only called for a key with rules.
   */
  checkKeyAddress(rules: KeyRules, request: LookupRequest): void {
    if (rules.allowsAddress === undefined) return;
    const address = request.caller?.address ?? '';
    if (!rules.allowsAddress(address)) throw new LookupError('KEY_NOT_ALLOWED', MESSAGES.keyAddressRefused(rules.keyName, address === '' ? 'an unknown address' : address));
  }

  /** A key's allowed operations (issue 33), once the call is resolved. */
  checkKeyOperation(rules: KeyRules, operation: OperationDeclaration): void {
    if (rules.allowsOperation === undefined || rules.allowsOperation(operation)) return;
    throw new LookupError('KEY_NOT_ALLOWED', MESSAGES.keyOperationRefused(rules.keyName, operation.name, rules.operations ?? []));
  }

  /** A key's own rate limits, counted under the key's own subject, inside the account's (checked first). */
  private keyRateLimit(rules: KeyRules, request: LookupRequest): Promise<void> | undefined {
    if (rules.perSecond === null && rules.perDay === null) return undefined;
    const decision = this.deps.rateLimiter?.checkKey(rules.keyId, { perSecond: rules.perSecond, perDay: rules.perDay });
    const refuse = (d: RateDecision): void => {
      if (d.allowed) return;
      this.deps.observer?.onRateLimited?.({ window: d.window, interface: request.interface });
      throw new LookupError('RATE_LIMITED', MESSAGES.keyRateLimited(rules.keyName, d.limit, d.window, d.retryAfterSeconds), { retryAfterSeconds: d.retryAfterSeconds });
    };
    if (decision instanceof Promise) return decision.then(refuse);
    if (decision) refuse(decision);
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
  private bySession(username: string): MaybePromise<Authenticated> {
    const check = (account: Account | undefined): Authenticated => {
      if (!account) throw new LookupError('UNAUTHORIZED', MESSAGES.usernameIncorrect);
      return { account: this.ensureEnabled(account), key: undefined };
    };
    const found = this.deps.accounts.find(username);
    return found instanceof Promise ? found.then(check) : check(found);
  }

  private byKey(basic: BasicCredentials | undefined): MaybePromise<Authenticated> {
    if (!basic) throw new LookupError('UNAUTHORIZED', 'Authentication required: HTTP Basic with your username and API key');
    const found = this.deps.accounts.find(basic.username);
    return found instanceof Promise ? found.then((account) => this.checkKey(account, basic)) : this.checkKey(found, basic);
  }

  private checkKey(account: Account | undefined, basic: BasicCredentials): Authenticated {
    const key = account ? this.liveKey(account, basic.apiKey) : undefined;
    if (!account || !key) {
      throw new LookupError('UNAUTHORIZED', 'Invalid username or API key');
    }
    return { account: this.ensureEnabled(account), key };
  }

  /** The live key of the account `apiKey` is (issue 16: several keys, rolled keys in grace), or undefined. */
  private liveKey(account: Account, apiKey: string): LiveKey | undefined {
    const clock = this.deps.clock;
    const ms = clock.millis ? clock.millis() : clock.now().getTime();
    const key = matchApiKey(apiKey, account.apiKeys, ms);
    if (key !== undefined) this.deps.onKeyUsed?.(key.id, ms);
    return key;
  }

  private byUsername(username: string | undefined, basic: BasicCredentials | undefined): MaybePromise<Authenticated> {
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
  private checkUsernameAccount(account: Account | undefined, basic: BasicCredentials | undefined): Authenticated {
    if (!account) throw new LookupError('UNAUTHORIZED', MESSAGES.usernameIncorrect);
    const keyRequired = account.requireApiKey || this.deps.requireApiKeyEverywhere;
    // Any live key of the account counts (issue 16: several keys, a rolled key in its grace period).
    // A key sent although not required still names the lookup's key (its ledger row, its rules:
    // issue 33); without Basic credentials the common case hashes nothing.
    const key = basic !== undefined && basic.username === account.username ? this.liveKey(account, basic.apiKey) : undefined;
    if (!keyRequired && !account.disabled) return { account, key };
    // The code still says why (metrics); the message is the unknown name's.
    if (!key && account.disabled) throw new LookupError('ACCOUNT_DISABLED', MESSAGES.usernameIncorrect);
    if (!key) throw new LookupError('UNAUTHORIZED', MESSAGES.usernameIncorrect);
    return { account: this.ensureEnabled(account), key };
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
