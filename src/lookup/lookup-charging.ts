import type { Account } from '../accounts/account.js';
import type { AccountCache } from '../accounts/account-cache.js';
import type { FreeLookupDetails } from '../credits/credit-ledger.repository.js';
import type { DebitBatcher } from '../credits/debit-batcher.js';
import { KEY_TAKEN, type DebitResult } from '../credits/debit-writer.js';
import type { TestPlates } from '../datasets/test-plates.js';
import type { Clock } from '../shared/clock.js';
import type { MaybePromise } from '../shared/maybe-promise.js';
import type { FreeReason } from '../storage/database.js';
import { isChargeable } from '../results/index.js';
import type { IdempotentReplays } from './idempotent-replay.js';
import { LookupError, MESSAGES } from './lookup-error.js';
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

  constructor(private readonly deps: LookupChargingDeps) {}

  /**
   * Stage "replay": the stored answer of an earlier charged lookup with this Idempotency-Key, same
   * account and query (charged 0 now); undefined when there is none; IDEMPOTENCY_CONFLICT when
   * the key was used for another query.
   */
  async replay(account: Account, query: LookupQuery, key: string): Promise<LookupOutcome | undefined> {
    const replays = this.deps.replays;
    if (!replays) throw new LookupError('INVALID_INPUT', 'Idempotency-Key is not supported by this server');
    const found = await replays.find(account.id, key, query.operation.name, describeQuery(query));
    if (!found) return undefined;
    return { operation: query.operation, result: found.result, charged: 0, balance: account.credits, replayed: true };
  }

  /**
   * Stage "price": what the lookup will cost (0 for a test plate), at once when the test plates are
   * loaded. Checked before asking the providers so an empty account does not spend upstream quota;
   * the cached balance may be stale, so a refusal is confirmed from the store. The debit stays the
   * authoritative check.
   */
  price(account: Account, query: LookupQuery): MaybePromise<number> {
    const op = query.operation;
    const testPlate = this.deps.testPlates.isTestPlate(op.name, query.key);
    if (testPlate instanceof Promise) return testPlate.then((free) => this.affordable(account, free ? 0 : op.cost));
    return this.affordable(account, testPlate ? 0 : op.cost);
  }

  /**
   * Stage "debit": takes the credits for a found and shaped answer, in one conditional update with
   * its ledger row (group-committed: DebitBatcher), and settles after its COMMIT with the outcome;
   * an answer that costs nothing gets its `free` row instead. It runs after shape, so nothing of
   * ours can fail between a debit and the answer it paid for.
   */
  async debit(account: Account, query: LookupQuery, request: LookupRequest, idempotencyKey: string | undefined, result: LookupResult, cost: number, source: string): Promise<LookupOutcome> {
    const operation = query.operation;
    const charge = isChargeable(result) ? cost : 0;
    if (charge === 0) {
      // Operation costs are at least 1 (catalogue, OPERATION_COSTS): a price of 0 is a test plate.
      const free: FreeReason = cost === 0 ? 'test-plate' : 'no-result';
      return this.free(account, query, request, { operation, result, charged: 0, balance: account.credits, free, source });
    }
    const balance = await this.write(account, query, charge, request, idempotencyKey, result, source);
    if (balance === KEY_TAKEN) return this.free(account, query, request, await this.replayTaken(account, query, idempotencyKey ?? ''));
    if (balance === undefined) throw await this.outOfCredit(account, charge);
    this.deps.accounts.noteBalance(account.username, balance);
    this.deps.onDebited?.(account.id, charge, balance);
    return { operation, result, charged: charge, balance, source };
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
  async free(account: Account, query: LookupQuery, request: LookupRequest, outcome: LookupOutcome): Promise<LookupOutcome> {
    const reason: FreeReason = outcome.replayed ? 'replay' : (outcome.free ?? 'no-result');
    const details: FreeLookupDetails = {
      operation: query.operation.name,
      interface: request.interface,
      query: describeQuery(query),
      requestId: request.requestId,
      createdAt: this.nowIso(),
      reason,
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

  /** The debit itself: the new balance after its COMMIT, undefined when the account cannot pay, or KEY_TAKEN. */
  private write(
    account: Account,
    query: LookupQuery,
    charge: number,
    request: LookupRequest,
    idempotencyKey: string | undefined,
    result: LookupResult,
    source: string,
  ): Promise<DebitResult> {
    const details = {
      operation: query.operation.name,
      interface: request.interface,
      query: describeQuery(query),
      requestId: request.requestId,
      createdAt: this.nowIso(),
      source,
    };
    if (idempotencyKey === undefined) return this.deps.debits.debit(account.id, charge, details);
    // The result is stored with the debit (DebitWriter): a retry is answered from it.
    return this.deps.debits.debit(account.id, charge, { ...details, idempotency: { key: idempotencyKey, result: JSON.stringify(result) } });
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
    const clock = this.deps.clock;
    const ms = clock.millis ? clock.millis() : clock.now().getTime();
    if (ms !== this.lastIso.ms) this.lastIso = { ms, iso: new Date(ms).toISOString() };
    return this.lastIso.iso;
  }
}
