/**
 * The storage change counter as one lookup sees it: read once when the lookup starts
 * (`refresh`), then the same value for every cache the lookup consults. A lookup that starts after
 * another process committed always sees the change, and the counter costs one read per lookup
 * rather than one per cache.
 */
export class ChangeSnapshot {
  private value: number;

  constructor(private readonly read: () => number) {
    this.value = read();
  }

  refresh(): void {
    this.value = this.read();
  }

  /** The value at the last refresh; pass as the caches' change counter. */
  readonly current = (): number => this.value;
}
