import { describe, expect, it } from 'vitest';
import { inKeyOrder } from '../../src/datasets/import/rdw-csv-importer.js';

describe('a run of RDW rows written at once', () => {
  it('is put in key order, so the store index takes it in one sweep', () => {
    const run = inKeyOrder(['PS993L', 'AA000A', 'FL986X'], ['{"p":1}', '{"a":2}', '{"f":3}']);
    expect(run).toEqual({ keys: ['AA000A', 'FL986X', 'PS993L'], documents: ['{"a":2}', '{"f":3}', '{"p":1}'] });
  });

  it('keeps the file order of a plate given twice, so its later row is still written last and wins', () => {
    const run = inKeyOrder(['ZZ999Z', 'AB123C', 'AA000A', 'AB123C'], ['z', 'first', 'a', 'second']);
    expect(run).toEqual({ keys: ['AA000A', 'AB123C', 'AB123C', 'ZZ999Z'], documents: ['a', 'first', 'second', 'z'] });
  });
});
