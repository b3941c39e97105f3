import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { RecordValidator } from '../../src/datasets/import/record-validator.js';

const DOC = readFileSync(new URL('../../docs/import-format.md', import.meta.url), 'utf8');
const SAMPLE = readFileSync(new URL('../../samples/sample-dataset.jsonl', import.meta.url), 'utf8');
const catalogue = new Catalogue();

/** The lines of every ```jsonl block of the document. */
function exampleLines(): string[] {
  return [...DOC.matchAll(/```jsonl\n([\s\S]*?)```/g)].flatMap((m) => (m[1] ?? '').split('\n').filter((l) => l.trim() !== ''));
}

describe('docs/import-format.md', () => {
  it('shows examples of every result type, and every example line imports', () => {
    const lines = exampleLines();
    const validator = new RecordValidator(catalogue);
    const types = new Set<string>();
    for (const line of lines) {
      const outcome = validator.validate(JSON.parse(line));
      expect(outcome, line.slice(0, 80)).toMatchObject({ ok: true });
      const op = catalogue.find((JSON.parse(line) as { operation: string }).operation);
      if (op) types.add(op.resultType);
    }
    expect([...types].sort()).toEqual([...new Set(catalogue.operations.map((op) => op.resultType))].sort());
  });

  it('takes its vehicle and rating examples verbatim from the sample dataset', () => {
    const sample = new Set(SAMPLE.split('\n'));
    // The sample dataset has no answer of the original kept whole ("vehicle" as {vehicleJson, vehicleData}).
    const verbatim = exampleLines().filter((line) => !line.startsWith('{"operation":"UKMOT"') && !line.includes('"vehicle":{"vehicleJson"'));
    expect(verbatim.length).toBeGreaterThan(3);
    for (const line of verbatim) expect(sample.has(line), line.slice(0, 80)).toBe(true);
  });

  it('lists the key members of every operation whose key is not just RegistrationNumber', () => {
    const table = DOC.slice(DOC.indexOf('## Key parameters'), DOC.indexOf('## Normalisation'));
    const rows = new Map<string, string[]>();
    for (const m of table.matchAll(/^\| ((?:`\w+`(?:, )?)+) \| ((?:`\w+`(?:, )?)+) \|$/gm)) {
      const members = [...(m[2] ?? '').matchAll(/`(\w+)`/g)].map((x) => x[1] ?? '');
      for (const op of (m[1] ?? '').matchAll(/`(\w+)`/g)) rows.set(op[1] ?? '', members);
    }
    for (const [name, members] of rows) {
      const op = catalogue.find(name);
      expect(op, `${name} is not an operation`).toBeDefined();
      if (op) expect(Catalogue.keyParameters(op).map((p) => p.name), name).toEqual(members);
    }
    for (const op of catalogue.operations) {
      const keys = Catalogue.keyParameters(op).map((p) => p.name);
      const plain = keys.length === 1 && keys[0] === 'RegistrationNumber';
      if (!plain && op.dataset.kind !== 'ncap') expect(rows.has(op.name), `${op.name} missing from the key table`).toBe(true);
    }
  });
});
