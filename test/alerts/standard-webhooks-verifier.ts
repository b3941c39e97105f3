import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A receiver's check of a Standard Webhooks delivery, written from the specification
 * (standardwebhooks.com, "Verifying webhook authenticity") and not from src/webhooks: the secret
 * is `whsec_` + base64 key bytes; the signed content is `{webhook-id}.{webhook-timestamp}.{body}`;
 * `webhook-signature` holds space-separated `v1,<base64 HMAC-SHA256>` entries, any one of which
 * may match; the timestamp must be within the tolerance of now (five minutes) against replays.
 * Returns which of `secrets` signed the delivery (indexes), or throws why it is not authentic.
 */
export function verifyStandardWebhook(
  secrets: readonly string[],
  headers: Readonly<Record<string, string>>,
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): number[] {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (id === undefined || timestamp === undefined || signatures === undefined) throw new Error('missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > 300) throw new Error(`timestamp ${timestamp} outside the tolerance`);
  const presented = signatures.split(' ').map((entry) => {
    const comma = entry.indexOf(',');
    return { version: entry.slice(0, comma), value: Buffer.from(entry.slice(comma + 1), 'base64') };
  });
  const matched: number[] = [];
  secrets.forEach((secret, index) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    const expected = createHmac('sha256', key).update(Buffer.from(`${id}.${timestamp}.${body}`, 'utf8')).digest();
    if (presented.some((p) => p.version === 'v1' && p.value.length === expected.length && timingSafeEqual(p.value, expected))) matched.push(index);
  });
  if (matched.length === 0) throw new Error('no signature matches');
  return matched;
}
