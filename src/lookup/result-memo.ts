import { PerObjectMemo } from '../shared/per-object-memo.js';
import type { LookupResult } from '../results/result-documents.js';

/**
 * Encoded answers, remembered per result object. A result built from a cached, deep-frozen
 * record is itself frozen and reused for every lookup of that record (LookupPipeline.shape), so
 * the bytes each protocol writes for it (the JSON body, the SOAP envelope) are computed once
 * instead of on every request. Results that are not frozen (a fresh Euro NCAP search, an upstream
 * answer) are encoded every time: nothing guarantees they stay as they are.
 *
 * Held weakly: when the record leaves the record cache (re-import, another process's change), its
 * results and their encodings go with it.
 */
const encodings = new PerObjectMemo<LookupResult, string>(
  // The key holds protocol, version, operation and namespace: a handful per result.
  16,
);

/**
 * `encode()`'s answer for `result` under `key`, computed once per frozen result. Kept as the
 * string rather than UTF-8 bytes: Node writes a string body together with the headers in one
 * chunk, while a Buffer body is a second chunk of a vectored write, which measured slower
 * (a null route answering the same 2.4 KB, about 5% fewer requests per second).
 * A result that is not frozen is encoded now.
 */
export function memoizedEncoding(result: LookupResult, key: string, encode: () => string): string {
  if (!Object.isFrozen(result)) return encode();
  return encodings.get(result, key, encode);
}
