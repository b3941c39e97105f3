import { setImmediate as nextTurn } from 'node:timers/promises';
import type { WaitClock } from '../../src/shared/wait-clock.js';

/**
 * A WaitClock for tests: its time moves only when the test calls `advance`, or, with
 * `advanceOnSleep`, by exactly what the code sleeps. A sleep itself lasts one turn of the event
 * loop, so the code under test tries again at once and everything else (requests, reads) runs
 * meanwhile; a bound is reached when the test decides, however slow the machine.
 */
export class ManualWaitClock implements WaitClock {
  private time = 0;
  private readonly slept: number[] = [];
  private readonly sleepers: Array<() => void> = [];

  constructor(private readonly options: { readonly advanceOnSleep?: boolean } = {}) {}

  now(): number {
    return this.time;
  }

  async sleep(ms: number): Promise<void> {
    this.slept.push(ms);
    if (this.options.advanceOnSleep) this.time += ms;
    for (const wake of this.sleepers.splice(0)) wake();
    await nextTurn();
  }

  /** Moves the time on by `ms`. */
  advance(ms: number): void {
    this.time += ms;
  }

  /** How many times the code has slept (waited before trying again). */
  get sleepCount(): number {
    return this.slept.length;
  }

  /** What the code asked to sleep, in milliseconds, in order. */
  get sleeps(): readonly number[] {
    return [...this.slept];
  }

  /** Resolves at the next sleep: the code met the lock and is waiting to try again. */
  nextSleep(): Promise<void> {
    return new Promise((resolve) => this.sleepers.push(resolve));
  }
}
