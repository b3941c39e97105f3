import type { Repeat } from '../../src/shared/repeat.js';

/**
 * A Repeat whose timers fire only when the test says (`fire()`), in place of setInterval: what
 * the code scheduled (`intervals`) can be checked, and nothing happens on the machine's time.
 */
export class ManualRepeat {
  private readonly tasks = new Set<{ readonly ms: number; readonly task: () => void }>();

  readonly repeat: Repeat = (ms, task) => {
    const entry = { ms, task };
    this.tasks.add(entry);
    return () => {
      this.tasks.delete(entry);
    };
  };

  /** The intervals of the timers running now, in milliseconds. */
  get intervals(): number[] {
    return [...this.tasks].map((entry) => entry.ms);
  }

  /** Runs every running timer's task once, as if each interval had passed. */
  fire(): void {
    for (const entry of [...this.tasks]) entry.task();
  }
}
