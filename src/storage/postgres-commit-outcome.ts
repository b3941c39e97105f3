import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import type { MaybePromise } from '../shared/maybe-promise.js';
import type { DatabaseSchema, Tx } from './database.js';
import { CommitOutcomeUnknown, StoreUnavailable, isStoreUnavailable, type CommitStatus } from './store-unavailable.js';

/*
 * PostgreSQL's commit-outcome settling (issue 31): a transaction whose COMMIT answer is lost with
 * the connection asks the server what became of it (txid_status) instead of guessing. The
 * storage's `transaction(work, { knownOutcome: true })` runs here on PostgreSQL; SQLite commits in
 * the process and always knows.
 */

/** How long CommitOutcomeUnknown.settled goes on asking after the settle wait: a bound, not a hope. */
const BACKGROUND_SETTLE_MS = 10 * 60_000;

/** Where commitStatus asks, and whether the store was closed meanwhile (then it stops asking). */
export interface Settling {
  readonly pool: pg.Pool;
  readonly closed: () => boolean;
}

/**
 * A transaction whose outcome is learnt even when the connection is lost during its COMMIT (see
 * Storage.transaction's `knownOutcome`). The transaction's id is read first (txid_current); when
 * `work` has finished and the transaction then fails with a lost connection, the COMMIT may or may
 * not have been applied, and only the server can tell: txid_status on a new connection, polled
 * while the server is away, for up to `settleMs`. A failure before `work` finished needs no
 * asking: a transaction the server never saw committed is rolled back.
 */
export async function transactKnowingOutcome<T>(db: Kysely<DatabaseSchema>, settling: Settling, work: (tx: Tx) => MaybePromise<T>, settleMs: number): Promise<T> {
  // Set inside the transaction's callback (an object: the compiler does not follow closures).
  const state: { xid: string | undefined; finished: boolean; result?: T } = { xid: undefined, finished: false };
  try {
    return await db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ xid: string }>`select txid_current()::text as xid`.execute(trx);
      state.xid = rows[0]?.xid;
      const result = await work({ db: trx, run: (query) => trx.executeQuery(query) });
      state.result = result;
      state.finished = true;
      return result;
    });
  } catch (error) {
    const xid = state.xid;
    if (!state.finished || xid === undefined || !isStoreUnavailable(error)) throw error;
    const status = await commitStatus(settling, xid, settleMs);
    if (status === 'committed') return state.result as T;
    if (status === 'aborted') throw new StoreUnavailable(`the database connection was lost during COMMIT; transaction ${xid} was rolled back`, { cause: error });
    throw new CommitOutcomeUnknown(xid, commitStatus(settling, xid, BACKGROUND_SETTLE_MS), error);
  }
}

/**
 * txid_status of `xid`, asked on a pooled connection until the server answers `committed` or
 * `aborted` or `waitMs` passes (then `unknown`); pauses of 100 ms growing to 1 s, so bounded in
 * count as well as time. `in progress` (the old backend has not finished yet) is asked again.
 * Stops (`unknown`) when the store is closed.
 */
async function commitStatus({ pool, closed }: Settling, xid: string, waitMs: number): Promise<CommitStatus> {
  const deadline = performance.now() + waitMs;
  let delay = 100;
  for (let attempt = 0; attempt < 10_000 && performance.now() < deadline && !closed(); attempt += 1) {
    try {
      const { rows } = await pool.query<{ status: string | null }>('select txid_status($1::bigint) as status', [xid]);
      const status = rows[0]?.status;
      if (status === 'committed' || status === 'aborted') return status;
    } catch {
      // The server is still away: ask again after the pause.
    }
    // Unreferenced: a process shutting down does not stay up for this.
    await sleep(Math.max(0, Math.min(delay, deadline - performance.now())), undefined, { ref: false });
    delay = Math.min(delay * 2, 1000);
  }
  return 'unknown';
}
