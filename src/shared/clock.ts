/** The time source; tests pass a fixed clock instead of mocking Date. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
