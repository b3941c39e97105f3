import type { RecordRepository } from './record.repository.js';

/**
 * The free test plates (issue 2: they answer and cost 0), held in memory: a handful of rows read on
 * every lookup. Reloaded when the storage change counter moves (another process wrote) or when they
 * are changed through this object.
 */
export class TestPlates {
  private plates: Set<string> | undefined;
  private counter: number | undefined;
  private loading: Promise<Set<string>> | undefined;

  constructor(
    private readonly records: RecordRepository,
    private readonly changeCounter: () => number,
  ) {}

  async isTestPlate(operation: string, lookupKey: string): Promise<boolean> {
    const now = this.changeCounter();
    if (now !== this.counter) {
      this.counter = now;
      this.plates = undefined;
    }
    const plates = this.plates ?? (await this.load());
    return plates.has(`${operation}\u0000${lookupKey}`);
  }

  async add(operation: string, lookupKey: string, createdAt: string): Promise<void> {
    await this.records.addTestPlate(operation, lookupKey, createdAt);
    this.plates = undefined;
  }

  async remove(operation: string, lookupKey: string): Promise<boolean> {
    const removed = await this.records.removeTestPlate(operation, lookupKey);
    this.plates = undefined;
    return removed;
  }

  list(): Promise<Array<{ operation: string; lookupKey: string }>> {
    return this.records.listTestPlates();
  }

  private load(): Promise<Set<string>> {
    this.loading ??= this.records
      .listTestPlates()
      .then((list) => {
        const set = new Set(list.map((p) => `${p.operation}\u0000${p.lookupKey}`));
        this.plates = set;
        return set;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}
