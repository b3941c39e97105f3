import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ChangeSnapshot } from '../../src/storage/change-snapshot.js';
import { noteLocalCommit } from '../../src/storage/local-commits.js';

function counting(): { snapshot: ChangeSnapshot; reads: () => number; set: (v: number) => void } {
  let value = 1;
  let reads = 0;
  const snapshot = new ChangeSnapshot(() => {
    reads += 1;
    return value;
  });
  return {
    snapshot,
    reads: () => reads,
    set: (v) => {
      value = v;
    },
  };
}

describe('ChangeSnapshot', () => {
  it('reads the counter once for all the lookups that start in one turn of the event loop', async () => {
    const { snapshot, reads, set } = counting();
    await nextTurn();
    const before = reads();
    for (let i = 0; i < 50; i += 1) snapshot.refresh();
    expect(reads() - before).toBe(1);
    // Another process commits during the turn: the turn keeps the value it read.
    set(2);
    snapshot.refresh();
    expect(snapshot.current()).toBe(1);
  });

  it('reads again in the next turn, so a request that arrives after another process committed sees the change', async () => {
    const { snapshot, reads, set } = counting();
    snapshot.refresh();
    set(2);
    await nextTurn();
    const before = reads();
    snapshot.refresh();
    expect(reads() - before).toBe(1);
    expect(snapshot.current()).toBe(2);
  });

  it('reads again within the turn after a commit through another connection of this thread', async () => {
    const { snapshot, reads, set } = counting();
    await nextTurn();
    snapshot.refresh();
    set(3);
    noteLocalCommit();
    const before = reads();
    snapshot.refresh();
    snapshot.refresh();
    expect(reads() - before).toBe(1);
    expect(snapshot.current()).toBe(3);
  });
});
