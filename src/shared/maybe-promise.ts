/**
 * A value at once, or a promise of it. Only for the lookup path's caches and the stages that read
 * them: a cached answer is returned as a plain value because awaiting it would still cost a turn of
 * the microtask queue and a promise per request (DESIGN.md "Shape"; measured by bench:json and
 * bench:soap). Everything else, providers included, is a plain `async` function.
 */
export type MaybePromise<T> = T | Promise<T>;
