import type { SharedCache } from '../../redis/shared-cache.js';
import type { WaitClock } from '../../shared/wait-clock.js';

/** The first pause of a waiting instance before it looks for the answer again; doubled up to the next. */
export const FIRST_POLL_MS = 10;
/** The longest pause between two looks: an answer that has landed is served at most this late. */
export const MAX_POLL_MS = 200;

/**
 * What a cache miss leads to when instances share Redis (issue 32, "single flight across
 * instances"): `lead` (this instance asks the upstream, then calls `release` once its answer is
 * stored, or at once when it has none), `answer` (another instance's answer, read from the shared
 * cache), or `alone` (ask the upstream without a lock: Redis did not answer, or the lock's holder
 * gave no answer within a lease).
 */
export type FlightTurn<A> = { readonly kind: 'lead'; readonly release: () => Promise<void> } | { readonly kind: 'answer'; readonly answer: A } | { readonly kind: 'alone' };

/**
 * Waits for this instance's turn at one key. The instance that takes the lock (SET NX PX, for
 * `leaseMs`: the provider's request budget) asks; the others look for its answer in the shared
 * cache with a short backoff on `wait`, trying the lock again at each look. So when the holder
 * fails (it releases the lock without storing an answer), or stores none (a not-found that is not
 * cached), the next waiting instance takes the lock and asks: one call at a time, never N. A
 * waiter that has seen no answer for a whole lease asks on its own. Never throws (SharedCache
 * does not).
 *
 * `read` looks for the answer; it is asked again right after the lock is taken, since the
 * previous holder may have stored its answer and released between this instance's miss and its
 * claim.
 */
export async function takeTurn<A>(shared: SharedCache, lockKey: string, leaseMs: number, wait: WaitClock, read: () => Promise<A | undefined>): Promise<FlightTurn<A>> {
  const giveUpAt = wait.now() + leaseMs;
  let pause = FIRST_POLL_MS;
  for (;;) {
    const claim = await shared.claim(lockKey, leaseMs);
    if (claim.role === 'alone') return { kind: 'alone' };
    if (claim.role === 'leader') {
      const landed = await read();
      if (landed === undefined) return { kind: 'lead', release: claim.release };
      await claim.release();
      return { kind: 'answer', answer: landed };
    }
    const left = giveUpAt - wait.now();
    if (left <= 0) return { kind: 'alone' };
    await wait.sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, MAX_POLL_MS);
    const answer = await read();
    if (answer !== undefined) return { kind: 'answer', answer };
  }
}
