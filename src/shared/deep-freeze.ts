/**
 * Freezes a parsed JSON value and everything in it. A frozen record is the lookup path's promise
 * that nothing will change it, so the result shaped from it and the bytes encoded from that are
 * computed once and shared (LookupPipeline shape, result-memo.ts).
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
