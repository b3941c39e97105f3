/** Records kept at most; the oldest is dropped first. */
const MAX_ENTRIES = 20_000;

/**
 * Parsed records by dataset and key, so a repeated lookup neither reads the store nor parses JSON.
 * Cleared when the storage change counter moves (another process imported) and when this process
 * imports. Misses are not cached, so a newly imported record is found at once.
 */
export class RecordCache {
  private readonly entries = new Map<string, unknown>();
  private counter: number | undefined;

  constructor(private readonly changeCounter: () => number) {}

  get(dataset: string, key: string): unknown {
    this.checkFreshness();
    return this.entries.get(`${dataset}\u0000${key}`);
  }

  set(dataset: string, key: string, record: unknown): void {
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(`${dataset}\u0000${key}`, record);
  }

  clear(): void {
    this.entries.clear();
  }

  private checkFreshness(): void {
    const now = this.changeCounter();
    if (now !== this.counter) {
      this.entries.clear();
      this.counter = now;
    }
  }
}
