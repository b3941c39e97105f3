import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What a loop that waits for something outside the process reads and sleeps on: the time elapsed
 * (to give up after a bound) and the pause between attempts. The service uses `realWaitClock`;
 * tests pass one whose time moves only when they say, so a bound is reached by the test's
 * decision, not by the machine's speed.
 */
export interface WaitClock {
  /** Milliseconds on a monotonic scale (only differences count). */
  now(): number;
  /** Resolves after about `ms` milliseconds. */
  sleep(ms: number): Promise<void>;
}

export const realWaitClock: WaitClock = {
  now: () => performance.now(),
  sleep: async (ms) => {
    await sleep(ms);
  },
};
