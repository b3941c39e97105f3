import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DeferredCounter } from '../../src/ops/deferred-counter.js';

describe('DeferredCounter', () => {
  it('renders exactly what a prom-client Counter given the same increments renders, scrape after scrape', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const deferred = new DeferredCounter(ours, 'x_total', 'help text', ['a', 'b']);
    const plain = new Counter({ name: 'x_total', help: 'help text', labelNames: ['a', 'b'], registers: [theirs] });
    const add = (a: string, b: string, n: number): void => {
      deferred.slot({ a, b }).pending += n;
      plain.inc({ a, b }, n);
    };
    add('one', 'x', 1);
    add('one', 'x', 2);
    add('two', 'y', 5);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    // A second scrape neither loses nor counts twice what the first one handed over.
    add('one', 'x', 4);
    add('three', 'z', 1);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toMatch(/x_total\{a="one",b="x"\} 7/);
  });

  it('shows a label set only once it was counted', async () => {
    const registry = new Registry();
    const deferred = new DeferredCounter(registry, 'y_total', 'help', ['a']);
    deferred.slot({ a: 'k' });
    expect(await registry.metrics()).not.toMatch(/y_total\{/);
  });
});
