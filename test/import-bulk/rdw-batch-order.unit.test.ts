import { describe, expect, it } from 'vitest';
import { inKeyOrder } from '../../src/datasets/import/rdw-row-source.js';

describe('a batch of RDW rows handed to the writer', () => {
  it('is put in key order, so the store index takes it in one sweep', () => {
    const batch = inKeyOrder(['PS993L', 'AA000A', 'FL986X'], ['{"p":1}', '{"a":2}', '{"f":3}']);
    expect(batch).toEqual({ keys: ['AA000A', 'FL986X', 'PS993L'], documents: ['{"a":2}', '{"f":3}', '{"p":1}'] });
  });

  it('keeps the file order of a plate given twice, so its later row is still written last and wins', () => {
    const batch = inKeyOrder(['ZZ999Z', 'AB123C', 'AA000A', 'AB123C'], ['z', 'first', 'a', 'second']);
    expect(batch).toEqual({ keys: ['AA000A', 'AB123C', 'AB123C', 'ZZ999Z'], documents: ['a', 'first', 'second', 'z'] });
  });
});
