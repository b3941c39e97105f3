/** Shorter values are not redacted: they would blank out ordinary words in messages. */
const MIN_SECRET_LENGTH = 6;
/** Values kept at most; issued OAuth tokens beyond this push out the oldest token. */
const MAX_SECRETS = 32;

/**
 * Removes known secret values (API keys, client secrets, bearer tokens) from text before it leaves
 * an upstream adapter. Our own error messages never contain secrets (UpstreamError); this is the
 * second line of defence for text we do not write ourselves, such as the message of an unexpected
 * exception (undici repeats an invalid header value in its TypeError, for example).
 */
export class SecretRedactor {
  private readonly secrets: string[] = [];
  /** How many of `secrets` came from the configuration; those are never evicted. */
  private readonly configured: number;

  constructor(secrets: readonly (string | undefined)[] = []) {
    for (const s of secrets) this.add(s);
    this.configured = this.secrets.length;
  }

  /** Adds a value to hide from now on (an access token once it is issued). */
  add(secret: string | undefined): void {
    if (secret === undefined || secret.length < MIN_SECRET_LENGTH || this.secrets.includes(secret)) return;
    this.secrets.push(secret);
    if (this.secrets.length > MAX_SECRETS) this.secrets.splice(this.configured, 1);
  }

  /** The text with every known secret replaced by `[redacted]`. */
  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('[redacted]');
    return out;
  }
}
