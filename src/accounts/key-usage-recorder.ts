import type { ApiKeyRepository } from './api-key.repository.js';
import type { Storage } from '../storage/create-database.js';

/** A key's last_used_at is written at most this often (per key, per process). */
export const KEY_USE_WRITE_INTERVAL_MS = 60_000;

/** How long uses wait in memory before they are written, so one write carries many keys. */
const FLUSH_DELAY_MS = 1_000;

/**
 * Records when API keys were used without a write per lookup: `note` is a map lookup on the hot
 * path; a key's time is written at most once a minute, in a batch a second later, off the request.
 * last_used_at is therefore up to a minute (plus a second) older than the true last use.
 */
export class KeyUsageRecorder {
  /** When each key's use was last queued for writing (ms). */
  private readonly queuedAt = new Map<number, number>();
  private pending = new Map<number, string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly keys: ApiKeyRepository,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  note(keyId: number, nowMs: number): void {
    const last = this.queuedAt.get(keyId);
    if (last !== undefined && nowMs - last < KEY_USE_WRITE_INTERVAL_MS) return;
    // Bounded like the account cache: forgetting only means one more write.
    if (this.queuedAt.size >= 100_000) this.queuedAt.clear();
    this.queuedAt.set(keyId, nowMs);
    this.pending.set(keyId, new Date(nowMs).toISOString());
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, FLUSH_DELAY_MS).unref();
  }

  /** Writes the queued uses now (also on close). */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const uses = this.pending;
    if (uses.size === 0) return this.flushing;
    this.pending = new Map();
    this.flushing = this.flushing.then(() => this.storage.transaction((tx) => this.keys.touch(tx, uses))).catch(this.onError);
    return this.flushing;
  }
}
