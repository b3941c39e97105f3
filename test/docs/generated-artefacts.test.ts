import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generatedArtefacts } from '../../scripts/generated-artefacts.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('generated artefacts', () => {
  for (const artefact of generatedArtefacts()) {
    it(`${artefact.path} is up to date with the code (else run npm run docs:generate)`, () => {
      let committed = '';
      try {
        committed = readFileSync(join(ROOT, artefact.path), 'utf8');
      } catch {
        throw new Error(`${artefact.path} is missing: run npm run docs:generate`);
      }
      if (committed !== artefact.render()) throw new Error(`${artefact.path} is stale: run npm run docs:generate`);
      expect(committed.length).toBeGreaterThan(0);
    });
  }

  it('snapshots a WSDL for each service', () => {
    expect(generatedArtefacts().map((a) => a.path)).toEqual(expect.arrayContaining(['docs/wsdl/reg.asmx.wsdl', 'docs/wsdl/bespokeapi.asmx.wsdl']));
  });
});
