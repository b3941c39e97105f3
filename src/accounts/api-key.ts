import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Random source for keys; tests may pass a deterministic one. */
export type RandomBytes = (size: number) => Buffer;

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

/** Compares a presented key with a stored hash in constant time. */
export function verifyApiKey(apiKey: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKey(apiKey), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
