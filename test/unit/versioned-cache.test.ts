import { describe, expect, it } from 'vitest';
import { VersionedCache } from '../../src/shared/versioned-cache.js';

describe('versioned cache (the lookup path cache seam)', () => {
  it('answers a kept entry at once, as a plain value', () => {
    const cache = new VersionedCache<string>(() => 1, 10);
    cache.set('a', 'A');
    expect(cache.peek('a')).toBe('A');
    expect(cache.peek('b')).toBeUndefined();
  });

  it('drops every entry when the change counter moves', () => {
    let counter = 1;
    const cache = new VersionedCache<string>(() => counter, 10);
    expect(cache.peek('a')).toBeUndefined();
    cache.set('a', 'A');
    counter = 2;
    expect(cache.peek('a')).toBeUndefined();
  });

  it('does not keep a value read before an invalidation, a clear or a counter move', () => {
    let counter = 1;
    const cache = new VersionedCache<string>(() => counter, 10);
    cache.peek('a');
    const beforeInvalidate = cache.mark();
    cache.invalidate('other');
    cache.set('a', 'stale', beforeInvalidate);
    expect(cache.peek('a')).toBeUndefined();

    const beforeClear = cache.mark();
    cache.clear();
    cache.set('a', 'stale', beforeClear);
    expect(cache.peek('a')).toBeUndefined();

    const beforeMove = cache.mark();
    counter = 2;
    expect(cache.peek('b')).toBeUndefined();
    cache.set('a', 'stale', beforeMove);
    expect(cache.peek('a')).toBeUndefined();

    const fresh = cache.mark();
    cache.set('a', 'fresh', fresh);
    expect(cache.peek('a')).toBe('fresh');
  });

  it('drops the oldest entry when full, and only one entry per key', () => {
    const cache = new VersionedCache<number>(() => 1, 2);
    cache.peek('x');
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('b', 3);
    expect(cache.peek('a')).toBe(1);
    cache.set('c', 4);
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.peek('b')).toBe(3);
    expect(cache.peek('c')).toBe(4);
  });
});
