/**
 * A value at once, or a promise of it. Only for the lookup path's caches and the stages that read
 * them, and for the debit's statements on SQLite (Tx.run): a cached answer or a synchronous
 * statement is returned as a plain value because awaiting it would still cost a turn of the
 * microtask queue and a promise per request (DESIGN.md "Shape"; measured by bench:json and
 * bench:soap, counted by test/cost/). Everything else, providers included, is a plain `async`
 * function.
 */
export type MaybePromise<T> = T | Promise<T>;

/** `next(value)`, at once when `value` is not a promise, else when it settles. */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
