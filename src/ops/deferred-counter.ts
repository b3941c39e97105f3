import { Counter, type Registry } from 'prom-client';

/** One label set's count not yet handed to prom-client. */
export interface CounterSlot {
  pending: number;
}

/**
 * A prom-client Counter whose hot-path increments are a number addition. prom-client hashes and
 * validates the label object on every `inc`, even through `labels()` children, which was
 * measurable on the lookup path (bench:json, bench:soap). Here a label set is resolved once to a
 * slot; additions accumulate there and are handed to the Counter by its `collect` hook, which
 * prom-client runs when /metrics is read. The registry, the text format and the counter itself
 * stay prom-client's.
 */
export class DeferredCounter<L extends string> {
  private readonly slots = new Map<string, { readonly labels: Readonly<Record<L, string>>; readonly slot: CounterSlot }>();

  constructor(
    registry: Registry,
    name: string,
    help: string,
    private readonly labelNames: readonly L[],
  ) {
    const slots = this.slots;
    new Counter<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      collect(this: Counter<L>) {
        for (const { labels, slot } of slots.values()) {
          if (slot.pending === 0) continue;
          this.inc(labels, slot.pending);
          slot.pending = 0;
        }
      },
    });
  }

  /** The slot of a label set; keep it to count without a lookup. */
  slot(labels: Readonly<Record<L, string>>): CounterSlot {
    const key = this.labelNames.map((n) => labels[n]).join('\u0000');
    let entry = this.slots.get(key);
    if (!entry) {
      entry = { labels: { ...labels }, slot: { pending: 0 } };
      this.slots.set(key, entry);
    }
    return entry.slot;
  }
}
