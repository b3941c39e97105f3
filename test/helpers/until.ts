import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `condition` every `intervalMs` until it holds. It has no deadline of its own: the test's
 * timeout is the only bound, so a loaded machine makes the wait longer, never the test wrong (a
 * loop of N tries, or a deadline of a few seconds, fails where the machine is slow).
 */
export async function until(condition: () => boolean | Promise<boolean>, intervalMs = 10): Promise<void> {
  while (!(await condition())) await sleep(intervalMs);
}
