/** The time source; tests pass a fixed clock instead of mocking Date. */
export interface Clock {
  now(): Date;
  /**
   * Milliseconds since the epoch without building a Date, where the clock can (the lookup path
   * reads the time on every request); `now().getTime()` otherwise.
   */
  millis?(): number;
}

// `millis` calls Date.now when asked rather than keeping it: fake timers replace Date.now later.
export const systemClock: Clock = { now: () => new Date(), millis: () => Date.now() };
