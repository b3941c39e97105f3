import { describe, expect, it } from 'vitest';
import type { PaidUpstreamSettings } from '../../src/config/paid-upstream-config.js';
import { UpstreamPolicy, type UpstreamStates } from '../../src/providers/routing/upstream-policy.js';
import { UpstreamMonitor } from '../../src/providers/upstream/upstream-monitor.js';
import { MICROS, type SharedOutState, type SpendSum, type StoredOutState } from '../../src/providers/upstream/upstream-state.repository.js';

const NOW = new Date('2026-11-28T12:00:00.000Z');

/** The shared store in memory, whose writes wait until the test lets them through (`release`). */
class HeldStates implements UpstreamStates {
  out: StoredOutState | undefined;
  micros = 0;
  calls = 0;
  reads = 0;
  private readonly held: Array<() => void> = [];

  private hold(): Promise<void> {
    return new Promise((resolve) => this.held.push(resolve));
  }

  /** Lets every write waiting now go through, and waits for what they do next. */
  async release(): Promise<void> {
    for (const go of this.held.splice(0)) go();
    await new Promise((resolve) => setImmediate(resolve));
  }

  get waiting(): number {
    return this.held.length;
  }

  state(): Promise<StoredOutState | undefined> {
    this.reads += 1;
    return Promise.resolve(this.out);
  }
  gateState(): Promise<{ out: StoredOutState | undefined; spent: SpendSum }> {
    this.reads += 1;
    return Promise.resolve({ out: this.out, spent: { spent: this.micros / MICROS, calls: this.calls } });
  }
  async takeOut(_provider: string, out: StoredOutState): Promise<void> {
    await this.hold();
    this.out = out;
  }
  async bringBack(_provider: string, keep: readonly SharedOutState[] = []): Promise<boolean> {
    await this.hold();
    if (!this.out || keep.includes(this.out.state)) return false;
    this.out = undefined;
    return true;
  }
  async addSpend(_provider: string, _day: string, micros: number): Promise<void> {
    await this.hold();
    this.micros += micros;
    this.calls += 1;
  }
  spend(): Promise<SpendSum> {
    return Promise.resolve({ spent: this.micros / MICROS, calls: this.calls });
  }
}

function policy(states: HeldStates, monthlyBudget?: number, log?: { warn(message: string): void }): { policy: UpstreamPolicy; monitor: UpstreamMonitor } {
  const monitor = new UpstreamMonitor(() => NOW);
  const settings: PaidUpstreamSettings = {
    name: 'paid',
    price: 0.4,
    operations: ['Check'],
    monthlyBudget,
    settings: { name: 'paid', baseUrl: 'http://127.0.0.1:1', timeoutMs: 1000, budgetMs: 2000, cacheTtlS: 0, notFoundTtlS: 0, breakerFailures: 5, breakerOpenMs: 30_000 },
  };
  return { policy: new UpstreamPolicy({ settings, monitor, clock: { now: () => NOW }, states, currency: 'GBP', log }), monitor };
}

const found = { type: 'answer', provider: 'paid', answer: 'found', via: 'upstream', seconds: 0.01 } as const;
const failed = (kind: string) => ({ type: 'answer', provider: 'paid', answer: 'unavailable', via: 'upstream', seconds: 0.01, failure: { kind, message: `said ${kind}` } }) as const;

describe("the router's gate of a paid upstream", () => {
  it('answers at once while this instance is still writing the spend of earlier calls, and counts that spend against the budget', async () => {
    const states = new HeldStates();
    const { policy: gate, monitor } = policy(states, 1);
    monitor.emit(found);
    monitor.emit(found);
    // Each found answer writes its spend and brings the source back (a refused key stays out): all held.
    expect(states.waiting).toBe(4);
    // Both spend writes are held: the gate still answers (it used to wait for them), counting 0.8 of 1.
    await expect(gate.gate()).resolves.toBeUndefined();
    monitor.emit(found);
    // 1.2 of a budget of 1, with none of it in the store yet.
    await expect(gate.gate()).resolves.toMatch(/^over its monthly budget \(1\.2 of 1 spent\)/);
    expect(states.micros).toBe(0);
    await states.release();
    await gate.settled();
    expect(states.micros).toBe(1_200_000);
    // Written: the store's word alone, counted once.
    await expect(gate.gate()).resolves.toMatch(/^over its monthly budget \(1\.2 of 1 spent\)/);
  });

  it('refuses at once after an out-of-funds answer whose state is still being written, and lets the store decide once it is', async () => {
    const states = new HeldStates();
    const { policy: gate, monitor } = policy(states);
    monitor.emit(failed('out-of-funds'));
    await expect(gate.gate()).resolves.toMatch(/^out of funds: said out-of-funds; not asked until /);
    expect(states.out).toBeUndefined();
    await states.release();
    await gate.settled();
    expect(states.out?.state).toBe('out-of-funds');
    await expect(gate.gate()).resolves.toMatch(/^out of funds/);
    // Another instance brings it back in the store: this one follows the store, as nothing of its own is unwritten.
    states.out = undefined;
    await expect(gate.gate()).resolves.toBeUndefined();
  });

  it('lets the newest unwritten change stand: a found answer after an out-of-quota one brings the source back before either is written', async () => {
    const states = new HeldStates();
    const { policy: gate, monitor } = policy(states);
    monitor.emit(failed('quota'));
    monitor.emit(found);
    await expect(gate.gate()).resolves.toBeUndefined();
    await states.release();
    await states.release();
    await gate.settled();
    // The writes were queued in order: take out, then bring back (an answer came after the refusal).
    expect(states.out).toBeUndefined();
  });

  it('keeps a refused key out when a found answer of a call still in flight is not yet written', async () => {
    const states = new HeldStates();
    states.out = { state: 'disabled', reason: 'key refused', until: null, changedAt: NOW.toISOString() };
    const { policy: gate, monitor } = policy(states);
    monitor.emit(found);
    await expect(gate.gate()).resolves.toMatch(/^disabled \(credentials refused\)/);
    await states.release();
    await states.release();
    await gate.settled();
    expect(states.out).toMatchObject({ state: 'disabled' });
  });

  it('reads the store once per gate: the out state, and with a budget the month spend in the same statement', async () => {
    const states = new HeldStates();
    const { policy: gate } = policy(states, 10);
    await gate.gate();
    expect(states.reads).toBe(1);
  });
});

describe("a paid upstream's own price signal", () => {
  it('ranks and spends by a price in UPSTREAM_CURRENCY, and leaves one in another currency unused (said once), the configured price standing', async () => {
    const states = new HeldStates();
    const warnings: string[] = [];
    const { policy: p, monitor } = policy(states, undefined, { warn: (message) => warnings.push(message) });
    monitor.emit({ ...found, cost: 0.49, costCurrency: 'EUR' });
    monitor.emit({ ...found, cost: 0.51, costCurrency: 'EUR' });
    expect(p.price).toBe(0.4);
    await states.release();
    await states.release();
    await p.settled();
    // Two calls at the configured 0.4, not the euros.
    expect(states.micros).toBe(800_000);
    expect(warnings).toEqual(['paid priced a call in EUR, not in UPSTREAM_CURRENCY GBP: its price signal is not used (nothing is converted); the configured price stands']);
    monitor.emit({ ...found, cost: 0.35, costCurrency: 'GBP' });
    monitor.emit({ ...found, cost: 0.3 });
    expect(p.price).toBe(0.3);
    await states.release();
    await states.release();
    await p.settled();
    expect(states.micros).toBe(800_000 + 350_000 + 300_000);
  });
});
