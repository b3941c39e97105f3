import { describe, expect, it } from 'vitest';
import { LookupCounts, LookupRollup } from '../../src/ops/lookup-rollup.js';
import { summariseByInterface, type LookupStatRow } from '../../src/ops/lookup-stats.repository.js';
import { ManualRepeat } from '../helpers/manual-repeat.js';

const at = (iso: string) => Date.parse(iso);

describe('LookupCounts (the in-memory side of the lookup rollup)', () => {
  it('counts each series in its UTC hour and hands the counts over once', () => {
    let now = at('2026-11-25T16:59:59.000Z');
    const counts = new LookupCounts(() => now);
    const ok = counts.slot('CheckFrance', 'json', 'success');
    const missing = counts.slot('CheckFrance', 'json', 'not_found');
    expect(counts.slot('CheckFrance', 'json', 'success')).toBe(ok);
    counts.count(ok);
    counts.count(ok);
    now = at('2026-11-25T17:00:00.000Z');
    counts.count(ok);
    counts.count(missing);
    expect(counts.take().sort((a, b) => a.hour.localeCompare(b.hour) || a.outcome.localeCompare(b.outcome))).toEqual([
      { hour: '2026-11-25T16:00:00.000Z', interface: 'json', operation: 'CheckFrance', outcome: 'success', count: 2 },
      { hour: '2026-11-25T17:00:00.000Z', interface: 'json', operation: 'CheckFrance', outcome: 'not_found', count: 1 },
      { hour: '2026-11-25T17:00:00.000Z', interface: 'json', operation: 'CheckFrance', outcome: 'success', count: 1 },
    ]);
    expect(counts.take()).toEqual([]);
    counts.count(ok);
    expect(counts.take()).toEqual([{ hour: '2026-11-25T17:00:00.000Z', interface: 'json', operation: 'CheckFrance', outcome: 'success', count: 1 }]);
  });

  it('starts a new hour when the clock steps back, instead of counting into the later one', () => {
    let now = at('2026-11-25T17:30:00.000Z');
    const counts = new LookupCounts(() => now);
    const ok = counts.slot('Check', 'soap11', 'success');
    counts.count(ok);
    now = at('2026-11-25T16:10:00.000Z');
    counts.count(ok);
    expect(counts.take().map((r) => [r.hour, r.count]).sort()).toEqual([
      ['2026-11-25T16:00:00.000Z', 1],
      ['2026-11-25T17:00:00.000Z', 1],
    ]);
  });

  it('takes back the rows of a failed write, merged with what was counted meanwhile', () => {
    const counts = new LookupCounts(() => at('2026-11-25T17:30:00.000Z'));
    const ok = counts.slot('Check', 'json', 'success');
    counts.count(ok);
    const failed = counts.take();
    counts.count(ok);
    expect(counts.restore(failed)).toBe(0);
    expect(counts.take()).toEqual([{ hour: '2026-11-25T17:00:00.000Z', interface: 'json', operation: 'Check', outcome: 'success', count: 2 }]);
  });

  it('keeps at most maxPendingRows rows, dropping the oldest hours first and saying how many lookups went', () => {
    const counts = new LookupCounts(() => at('2026-11-25T17:30:00.000Z'), 2);
    const rows = ['14', '15', '16', '17'].map((h, i) => ({ hour: `2026-11-25T${h}:00:00.000Z`, interface: 'json', operation: 'Check', outcome: 'success', count: i + 1 }));
    expect(counts.restore(rows)).toBe(1 + 2);
    expect(counts.pendingRows).toBe(2);
    expect(counts.take().map((r) => r.hour).sort()).toEqual(['2026-11-25T16:00:00.000Z', '2026-11-25T17:00:00.000Z']);
  });
});

describe('summariseByInterface', () => {
  it('totals each interface, splits successes from errors by code, and gives the success rate', () => {
    expect(
      summariseByInterface([
        { interface: 'soap12', outcome: 'success', count: 0 },
        { interface: 'json', outcome: 'success', count: 6 },
        { interface: 'json', outcome: 'not_found', count: 1 },
        { interface: 'json', outcome: 'unauthorized', count: 3 },
        { interface: 'json', outcome: 'success', count: 2 },
      ]),
    ).toEqual([
      { interface: 'json', total: 12, successes: 8, errors: { unauthorized: 3, not_found: 1 }, successRate: 8 / 12 },
      { interface: 'soap12', total: 0, successes: 0, errors: {}, successRate: null },
    ]);
  });
});

describe('LookupRollup (the periodic writes of the counts)', () => {
  it('writes the counts each time its timer fires, and stops the timer and writes the rest on close', async () => {
    const timer = new ManualRepeat();
    const counts = new LookupCounts(() => at('2026-11-25T16:30:00.000Z'));
    const written: LookupStatRow[][] = [];
    const repository = { add: (_tx: unknown, rows: readonly LookupStatRow[]) => Promise.resolve(void written.push([...rows])) };
    const storage = { transaction: <T>(work: (tx: never) => Promise<T>) => work(undefined as never) };
    const rollup = new LookupRollup(counts, storage, repository, 10_000, { warn: () => undefined }, timer.repeat);
    expect(timer.intervals).toEqual([]);
    rollup.start();
    rollup.start();
    expect(timer.intervals).toEqual([10_000]);

    counts.count(counts.slot('CheckFrance', 'json', 'success'));
    expect(written).toEqual([]);
    timer.fire();
    await rollup.flush();
    expect(written).toEqual([[{ hour: '2026-11-25T16:00:00.000Z', interface: 'json', operation: 'CheckFrance', outcome: 'success', count: 1 }]]);

    counts.count(counts.slot('CheckFrance', 'json', 'not_found'));
    await rollup.close();
    expect(timer.intervals).toEqual([]);
    expect(written.map((rows) => rows.map((row) => row.outcome))).toEqual([['success'], ['not_found']]);
  });
});
