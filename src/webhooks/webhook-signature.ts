import { createHmac, randomBytes } from 'node:crypto';

/**
 * Signing as the Standard Webhooks specification says (standardwebhooks.com, "Signature scheme"):
 * the signed content is `{webhook-id}.{webhook-timestamp}.{body}`, the signature is the base64
 * HMAC-SHA256 of it under the secret's base64-decoded bytes, sent as `v1,<signature>`; several
 * signatures (a secret rotation) are separated by spaces in one `webhook-signature` header.
 */

/** The prefix of a Standard Webhooks symmetric secret. */
export const SECRET_PREFIX = 'whsec_';

/** A new secret: `whsec_` + 32 random bytes in base64 (the spec allows 24 to 64 bytes). */
export function generateWebhookSecret(random: (size: number) => Buffer = randomBytes): string {
  return SECRET_PREFIX + random(32).toString('base64');
}

/** The key bytes of a `whsec_...` secret. */
function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** `v1,<base64 HMAC-SHA256>` of one message under one secret. */
export function signWebhook(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of one attempt; `secrets` are the live ones, current first. */
export function webhookHeaders(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signWebhook(s, messageId, timestampSeconds, body)).join(' '),
  };
}
