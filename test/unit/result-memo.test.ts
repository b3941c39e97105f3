import { describe, expect, it } from 'vitest';
import type { LookupResult } from '../../src/results/result-documents.js';
import { memoizedEncoding } from '../../src/lookup/result-memo.js';
import { BoundedMemo } from '../../src/shared/bounded-memo.js';
import { PerObjectMemo } from '../../src/shared/per-object-memo.js';

describe('memoizedEncoding', () => {
  it('encodes a frozen result once per key and hands back the same bytes', () => {
    const result: LookupResult = Object.freeze({ type: 'Vehicle', value: Object.freeze({ document: { Description: 'CLIO' }, vehicleDataOmits: [] }) });
    let calls = 0;
    const encode = (): string => {
      calls += 1;
      return `{"n":${calls}}`;
    };
    const first = memoizedEncoding(result, 'json', encode);
    const second = memoizedEncoding(result, 'json', encode);
    expect(second).toBe(first);
    expect(first).toBe('{"n":1}');
    // Another key (another protocol or namespace) is encoded on its own.
    expect(memoizedEncoding(result, 'soap1.1', encode)).toBe('{"n":2}');
  });

  it('encodes a result that is not frozen on every call: nothing says it stays as it is', () => {
    const result: LookupResult = { type: 'Vehicle', value: { document: { Description: 'CLIO' }, vehicleDataOmits: [] } };
    let calls = 0;
    const encode = (): string => JSON.stringify({ ...(result.value as { document: object }).document, calls: (calls += 1) });
    memoizedEncoding(result, 'json', encode);
    expect(memoizedEncoding(result, 'json', encode)).toBe('{"Description":"CLIO","calls":2}');
  });
});

describe('PerObjectMemo', () => {
  it('keeps at most the bound of keys per object, so a caller varying the key cannot grow it', () => {
    const memo = new PerObjectMemo<object, number>(3);
    const owner = {};
    let derived = 0;
    const get = (key: string): number => memo.get(owner, key, () => (derived += 1));
    for (const key of ['a', 'b', 'c']) get(key);
    expect(get('a')).toBe(1);
    expect(derived).toBe(3);
    // A fourth key starts the object's memory over: 'a' is derived again.
    get('d');
    expect(get('a')).toBe(5);
  });
});

describe('BoundedMemo', () => {
  it('computes each short key once, starts over when full, and never keeps a long key', () => {
    let computed = 0;
    const memo = new BoundedMemo((key: string) => `${key}:${(computed += 1)}`, 2, 8);
    expect(memo.get('a')).toBe('a:1');
    expect(memo.get('a')).toBe('a:1');
    memo.get('b');
    // Full: the third key empties the memory, so 'a' is computed again.
    memo.get('c');
    expect(memo.get('a')).toBe('a:4');
    const long = 'x'.repeat(9);
    expect(memo.get(long)).toBe(`${long}:5`);
    expect(memo.get(long)).toBe(`${long}:6`);
  });
});
