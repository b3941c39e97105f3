import type { Account } from '../accounts/account.js';
import type { AccountCache } from '../accounts/account-cache.js';
import type { FreeLookupDetails, ReversalDetails } from '../credits/credit-ledger.repository.js';
import { CLIENT_GONE, type DebitBatcher, type QueuedDebitResult } from '../credits/debit-batcher.js';
import { KEY_CAP_REACHED, KEY_TAKEN } from '../credits/debit-writer.js';
import type { LiveKey } from '../accounts/api-key.js';
import { capPeriodEndsMs, capPeriodKey, type KeyRules } from '../accounts/key-rules.js';
import type { TestPlates } from '../datasets/test-plates.js';
import type { Clock } from '../shared/clock.js';
import { andThen, type MaybePromise } from '../shared/maybe-promise.js';
import type { FreeReason } from '../storage/database.js';
import { isChargeable } from '../results/index.js';
import type { IdempotentReplays } from './idempotent-replay.js';
import { LookupError, MESSAGES } from './lookup-error.js';
import { memoizedEncoding } from './result-memo.js';
import { describeQuery, type LookupQuery } from './lookup-query.js';
import type { LookupOutcome, LookupObserver, LookupRequest } from './lookup-request.js';
import type { LookupResult } from '../results/result-documents.js';

/** What the charging stages need from the pipeline's dependencies (LookupPipelineDeps). */
export interface LookupChargingDeps {
  readonly accounts: AccountCache;
  readonly debits: DebitBatcher;
  readonly testPlates: TestPlates;
  readonly clock: Clock;
  readonly observer?: LookupObserver;
  readonly onDebited?: (accountId: number, cost: number, balanceAfter: number) => void;
  readonly replays?: IdempotentReplays;
  readonly onFreeRowLost?: (row: FreeLookupDetails & { readonly accountId: number }, error: unknown) => void;
  /** A debit whose answer was not delivered could not be given back (it stands): to be logged with its request id. */
  readonly onReversalFailed?: (row: ReversalDetails & { readonly accountId: number }, error: unknown) => void;
}

/** A lookup's Idempotency-Key, and whether its record was read before the lookup (LookupPipeline.run). */
export interface KeyedLookup {
  readonly key: string;
  readonly read: boolean;
}

/**
 * The pipeline's money stages (lookup-pipeline.ts): "replay" (an Idempotency-Key's stored answer),
 * "price" (before asking any provider) and "debit" (after the answer is shaped). Credits move only
 * in `debit`, in one conditional update with its ledger row; every failure before it costs
 * nothing. A found answer that costs nothing (test plate, nothing to charge, replay) gets a ledger
 * row of kind `free` instead (`free`).
 */
export class LookupCharging {
  private lastIso = { ms: Number.NaN, iso: '' };
  /** Reversals being written (reverse), awaited by `settled` before the store closes. */
  private readonly reversals = new Set<Promise<void>>();
  /**
   * Keys whose cap this process saw refused, with the period it was refused in: their next
   * lookups in that period are refused at the price stage, before any provider is asked. By the
   * rules object, so a changed cap (a new object when the account reloads) is tried again; the
   * debit stays the authority.
   */
  private readonly capSpent = new WeakMap<KeyRules, string>();

  constructor(private readonly deps: LookupChargingDeps) {}

  /** Whether this server keeps Idempotency-Key records (without them a key is refused by `replay`). */
  get keepsKeyRecords(): boolean {
    return this.deps.replays !== undefined;
  }

  /**
   * Stage "replay": the stored answer of an earlier charged lookup with this Idempotency-Key, same
   * account and query (charged 0 now); undefined when there is none; IDEMPOTENCY_CONFLICT when
   * the key was used for another query.
   */
  replay(account: Account, query: LookupQuery, key: string): MaybePromise<LookupOutcome | undefined> {
    const replays = this.deps.replays;
    if (!replays) throw new LookupError('INVALID_INPUT', 'Idempotency-Key is not supported by this server');
    // A plain value when the store answered at once (SQLite): no promise on a key's first lookup.
    return andThen(replays.find(account.id, key, query.operation.name, describeQuery(query)), (found): LookupOutcome | undefined =>
      found ? { operation: query.operation, result: found.result, charged: 0, balance: account.credits, replayed: true } : undefined,
    );
  }

  /**
   * Stage "price": what the lookup will cost (0 for a test plate), at once when the test plates are
   * loaded. Checked before asking the providers so an empty account does not spend upstream quota;
   * the cached balance may be stale, so a refusal is confirmed from the store. The debit stays the
   * authoritative check.
   */
  price(account: Account, query: LookupQuery, rules?: KeyRules): MaybePromise<number> {
    const op = query.operation;
    if (rules?.cap) this.refuseIfCapSpent(rules);
    const testPlate = this.deps.testPlates.isTestPlate(op.name, query.key);
    if (testPlate instanceof Promise) return testPlate.then((free) => this.affordable(account, free ? 0 : op.cost));
    return this.affordable(account, testPlate ? 0 : op.cost);
  }

  /**
   * Stage "debit": takes the credits for a found and shaped answer, in one conditional update with
   * its ledger row (group-committed: DebitBatcher), and settles after its COMMIT with the outcome;
   * an answer that costs nothing gets its `free` row instead. It runs after shape, so nothing of
   * ours can fail between a debit and the answer it paid for.
   *
   * No credit is taken for an answer the client cannot receive (issue 31, docs/interfaces.md
   * "Credits"): a request whose connection is gone is not debited (checked here and again as the
   * batch is written: CLIENT_GONE), and a debit whose answer is then not written whole to the
   * connection is given back in the same ledger (`reverse`).
   */
  async debit(
    account: Account,
    query: LookupQuery,
    request: LookupRequest,
    idempotency: KeyedLookup | undefined,
    result: LookupResult,
    cost: number,
    source: string,
    key?: LiveKey,
  ): Promise<LookupOutcome> {
    const operation = query.operation;
    const charge = isChargeable(result) ? cost : 0;
    const idempotencyKey = idempotency?.key;
    if (charge === 0) {
      // A key not read yet (a cached record's lookup): a free answer claims nothing, so its record,
      // if any, is read now; a repeat is a replay and another query a conflict, as for any lookup.
      if (idempotency !== undefined && !idempotency.read) {
        const replayed = await this.replay(account, query, idempotency.key);
        if (replayed) return this.free(account, query, request, replayed, key);
      }
      // Operation costs are at least 1 (catalogue, OPERATION_COSTS): a price of 0 is a test plate.
      const free: FreeReason = cost === 0 ? 'test-plate' : 'no-result';
      return this.free(account, query, request, { operation, result, charged: 0, balance: account.credits, free, source }, key);
    }
    const delivery = request.delivery;
    if (delivery !== undefined && !delivery.open()) throw new LookupError('CLIENT_GONE', MESSAGES.clientGone);
    const details = this.details(query, request, key, source);
    const balance = await this.write(account, charge, details, idempotencyKey, result, request);
    if (balance === KEY_TAKEN) return this.free(account, query, request, await this.replayTaken(account, query, idempotencyKey ?? ''), key);
    if (balance === CLIENT_GONE) throw new LookupError('CLIENT_GONE', MESSAGES.clientGone);
    if (balance === KEY_CAP_REACHED) throw this.capReached(key?.rules);
    if (balance === undefined) throw await this.outOfCredit(account, charge);
    this.deps.accounts.noteBalance(account.username, balance);
    this.deps.onDebited?.(account.id, charge, balance);
    delivery?.whenUndelivered(() => {
      this.reverse(account, { ...details, createdAt: this.nowIso(), cost: charge }, idempotencyKey);
    });
    return { operation, result, charged: charge, balance, source };
  }

  /** Resolves once every reversal started so far is written (or failed): the app awaits it before the store closes. */
  async settled(): Promise<void> {
    while (this.reversals.size > 0) await Promise.all(this.reversals);
  }

  /**
   * Gives back a committed debit whose answer did not reach the connection: `+cost` and a
   * `reversal` row with the debit's request id, and its Idempotency-Key released, in one
   * transaction (DebitWriter.reverse). If that fails, the debit stands and the failure is logged
   * with the request id and counted, for the operator to give it back by hand.
   */
  private reverse(account: Account, reversal: ReversalDetails, idempotencyKey: string | undefined): void {
    const written = this.deps.debits.reverse(account.id, reversal, idempotencyKey).then(
      (balance) => {
        if (balance !== undefined) this.deps.accounts.noteBalance(account.username, balance);
        this.deps.observer?.onDebitReversal?.({ interface: reversal.interface, outcome: 'reversed' });
      },
      (error: unknown) => {
        this.deps.observer?.onDebitReversal?.({ interface: reversal.interface, outcome: 'failed' });
        this.deps.onReversalFailed?.({ ...reversal, accountId: account.id }, error);
      },
    );
    this.reversals.add(written);
    void written.finally(() => this.reversals.delete(written));
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
  async free(account: Account, query: LookupQuery, request: LookupRequest, outcome: LookupOutcome, key?: LiveKey): Promise<LookupOutcome> {
    const reason: FreeReason = outcome.replayed ? 'replay' : (outcome.free ?? 'no-result');
    const details: FreeLookupDetails = {
      operation: query.operation.name,
      interface: request.interface,
      query: describeQuery(query),
      requestId: request.requestId,
      createdAt: this.nowIso(),
      reason,
      apiKeyId: key?.id ?? null,
      userId: userIdOf(request),
      source: outcome.source ?? null,
    };
    try {
      await this.deps.debits.free(account.id, details);
    } catch (error) {
      this.deps.observer?.onFreeRowLost?.({ interface: request.interface, reason });
      this.deps.onFreeRowLost?.({ ...details, accountId: account.id }, error);
    }
    return outcome.free === reason ? outcome : { ...outcome, free: reason };
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

  /** What a debit's ledger row (and its reversal's) records of the lookup, with its key's cap where it has one. */
  private details(query: LookupQuery, request: LookupRequest, key: LiveKey | undefined, source: string) {
    const cap = key?.rules?.cap;
    return {
      operation: query.operation.name,
      interface: request.interface,
      query: describeQuery(query),
      requestId: request.requestId,
      createdAt: this.nowIso(),
      apiKeyId: key?.id ?? null,
      userId: userIdOf(request),
      // Only a capped key's debit carries its cap: the writer adds a query for it alone.
      ...(cap ? { cap: { keyId: key.id, periodKey: capPeriodKey(cap.period, this.nowMs()) } } : {}),
      source,
    };
  }

  /**
   * The debit itself: the new balance after its COMMIT, undefined when the account cannot pay,
   * KEY_TAKEN, or CLIENT_GONE when the connection closed before its batch was written.
   */
  private write(
    account: Account,
    charge: number,
    details: ReturnType<LookupCharging['details']>,
    idempotencyKey: string | undefined,
    result: LookupResult,
    request: LookupRequest,
  ): Promise<QueuedDebitResult> {
    const delivery = request.delivery;
    const live = delivery === undefined ? undefined : () => delivery.open();
    if (idempotencyKey === undefined) return this.deps.debits.debit(account.id, charge, details, live);
    // The result is stored with the debit (DebitWriter): a retry is answered from it. The whole
    // result, not a reference to its record: the retry gets the same bytes even after a re-import
    // changed the record. A frozen result (a cached record's, the common case) is the same object
    // for every lookup of that record, so its JSON text is computed once (result-memo.ts) and
    // stored once for all the keys that paid for it while it is young (AnswerBatch).
    const stored = memoizedEncoding(result, 'idempotency-record', () => JSON.stringify(result));
    const answer = Object.isFrozen(result) ? result : undefined;
    return this.deps.debits.debit(account.id, charge, { ...details, idempotency: { key: idempotencyKey, result: stored, answer } }, live);
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

  /** A refusal for a key whose cap this process saw spent in the current period (see capSpent). */
  private refuseIfCapSpent(rules: KeyRules): void {
    const cap = rules.cap;
    if (cap === null) return;
    const spentIn = this.capSpent.get(rules);
    if (spentIn !== undefined && spentIn === capPeriodKey(cap.period, this.nowMs())) throw this.capReached(rules, false);
  }

  /** The refusal of a debit its key's cap did not allow, with the wait until the period turns. */
  private capReached(rules: KeyRules | undefined, remember = true): LookupError {
    const cap = rules?.cap;
    // The writer refuses only a debit that carried a cap.
    if (!rules || !cap) return new LookupError('INTERNAL', 'a debit without a key cap was refused for its cap');
    const nowMs = this.nowMs();
    if (remember) this.capSpent.set(rules, capPeriodKey(cap.period, nowMs));
    const endsMs = capPeriodEndsMs(cap.period, nowMs);
    const retryAfterSeconds = endsMs === null ? undefined : Math.max(1, Math.ceil((endsMs - nowMs) / 1000));
    return new LookupError('KEY_CAP_REACHED', MESSAGES.keyCapReached(rules.keyName, cap.credits, cap.period, retryAfterSeconds), retryAfterSeconds === undefined ? {} : { retryAfterSeconds });
  }

  private nowMs(): number {
    const clock = this.deps.clock;
    return clock.millis ? clock.millis() : clock.now().getTime();
  }

  /** The clock's time as ISO 8601, formatted once per millisecond (lookups under load share one). */
  private nowIso(): string {
    const ms = this.nowMs();
    if (ms !== this.lastIso.ms) this.lastIso = { ms, iso: new Date(ms).toISOString() };
    return this.lastIso.iso;
  }
}

/** The console user of a Try it lookup (its ledger row names them: issue 33); null on every other interface. */
function userIdOf(request: LookupRequest): number | null {
  return request.auth.mode === 'session' ? (request.auth.userId ?? null) : null;
}
