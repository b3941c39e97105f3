import { describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR, type AuditLog } from '../../src/audit/audit-log.js';
import type { RecordRepository } from '../../src/datasets/record.repository.js';
import { TestPlates } from '../../src/datasets/test-plates.js';
import type { Storage } from '../../src/storage/create-database.js';
import type { Tx } from '../../src/storage/database.js';

type Plate = { operation: string; lookupKey: string };

/** A repository whose list reads the test answers by hand, so a change can land mid-read. */
function slowRepository(): { repo: RecordRepository; reads: Array<(plates: Plate[]) => void>; stored: Plate[] } {
  const reads: Array<(plates: Plate[]) => void> = [];
  const stored: Plate[] = [];
  const repo = {
    listTestPlates: () => new Promise<Plate[]>((resolve) => reads.push(resolve)),
    addTestPlate: (_tx: Tx, operation: string, lookupKey: string) => {
      stored.push({ operation, lookupKey });
      return Promise.resolve(true);
    },
    removeTestPlate: () => Promise.resolve(true),
  } as unknown as RecordRepository;
  return { repo, reads, stored };
}

/** A transaction that is only handed on, and an audit log that records nothing: the cache is what is tested here. */
const storage: Pick<Storage, 'transaction'> = { transaction: async (work) => work({} as Tx) };
const audit = { record: () => Promise.resolve() } as unknown as AuditLog;
const plates = (repo: RecordRepository, counter: () => number): TestPlates => new TestPlates(repo, counter, storage, audit, { now: () => new Date() });

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('test plate cache', () => {
  it('does not keep a list read before a change made through it', async () => {
    const { repo, reads, stored } = slowRepository();
    const cache = plates(repo, () => 1);
    const before = cache.isTestPlate('CheckFrance', 'AB123CD');
    await tick();
    await cache.add('CheckFrance', 'AB123CD', SYSTEM_ACTOR);
    // The read that started before the add answers with the old (empty) list.
    reads[0]?.([]);
    expect(await before).toBe(false);
    const after = cache.isTestPlate('CheckFrance', 'AB123CD');
    await tick();
    expect(reads).toHaveLength(2);
    reads[1]?.([...stored]);
    expect(await after).toBe(true);
  });

  it('does not keep a list read before another process changed the store', async () => {
    const { repo, reads } = slowRepository();
    let counter = 1;
    const cache = plates(repo, () => counter);
    const first = cache.isTestPlate('CheckUSA', 'X|NJ');
    await tick();
    counter = 2;
    const second = cache.isTestPlate('CheckUSA', 'X|NJ');
    await tick();
    // The second lookup did not reuse the read started under the old counter.
    expect(reads).toHaveLength(2);
    reads[0]?.([]);
    reads[1]?.([{ operation: 'CheckUSA', lookupKey: 'X|NJ' }]);
    expect(await first).toBe(false);
    expect(await second).toBe(true);
    // The newer list is the one kept.
    expect(await cache.isTestPlate('CheckUSA', 'X|NJ')).toBe(true);
    expect(reads).toHaveLength(2);
  });
});

describe('test plate cache when the store fails', () => {
  it('rejects the lookup that read and leaves no unhandled rejection behind', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const repo = { listTestPlates: () => Promise.reject(new Error('store is down')) } as unknown as RecordRepository;
      const cache = plates(repo, () => 1);
      await expect(cache.isTestPlate('CheckFrance', 'AB123CD')).rejects.toThrow('store is down');
      await tick();
      await tick();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
