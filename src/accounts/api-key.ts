import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyRules } from './key-rules.js';

/** Random source for keys; tests may pass a deterministic one. */
export type RandomBytes = (size: number) => Buffer;

/** Characters of a key kept in clear as its visible prefix (48 of its 256 bits). */
export const KEY_PREFIX_LENGTH = 8;

/** 32 random bytes, base64url: 43 characters, no padding, safe in Basic auth and shells. */
export function generateApiKey(random: RandomBytes = randomBytes): string {
  return random(32).toString('base64url');
}

/**
 * Keys are high-entropy random strings, so a fast hash is enough to make a stolen database
 * useless for authentication; a slow password hash would only cost throughput.
 */
export function hashApiKey(apiKey: string): string {
  // One-shot hash: no Hash object per request (measurable on the lookup path).
  return hash('sha256', apiKey, 'hex');
}

/** The SHA-256 of a presented key as bytes (hashApiKey's hex, decoded): what matchApiKey compares. */
function hashBytesOf(apiKey: string): Buffer {
  return hash('sha256', apiKey, 'buffer');
}

function hashMatches(presented: Buffer, stored: Buffer): boolean {
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** A key that authenticates its account, as the account cache holds it. */
export interface LiveKey {
  readonly id: number;
  /**
   * The stored hash (api_keys.key_hash) decoded from hex once, when the account is cached: the
   * lookup path compares bytes without decoding the hex of every key on every request.
   */
  readonly hash: Buffer;
  /** Milliseconds since the epoch after which the key no longer works (a rolled key); null: never. */
  readonly expiresAtMs: number | null;
  /** The key's own rules (issue 33); undefined for a key without any: nothing more is checked for it. */
  readonly rules?: KeyRules;
}

/**
 * The live key `apiKey` is, or undefined. The key is hashed once and compared with every
 * live key of the account in constant time (an account has a handful at most).
 */
export function matchApiKey(apiKey: string, keys: readonly LiveKey[], nowMs: number): LiveKey | undefined {
  const presented = hashBytesOf(apiKey);
  let found: LiveKey | undefined;
  for (const key of keys) {
    // No early exit: every key is compared, so timing does not tell which one matched.
    if (hashMatches(presented, key.hash) && (key.expiresAtMs === null || key.expiresAtMs > nowMs)) found = key;
  }
  return found;
}
