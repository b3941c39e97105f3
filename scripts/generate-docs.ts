/**
 * Writes the generated artefacts (docs/operations.md, the WSDL snapshots in docs/wsdl/, the OpenAPI
 * document docs/openapi/lookup.json) from the code. `--check` writes nothing and exits 1 when a
 * committed file is stale; the test suite (test/docs/generated-artefacts.test.ts) checks the same.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedArtefacts } from './generated-artefacts.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function main(check: boolean): Promise<number> {
  let stale = 0;
  for (const artefact of generatedArtefacts()) {
    const path = join(ROOT, artefact.path);
    const expected = artefact.render();
    if (check) {
      const current = await readFile(path, 'utf8').catch(() => '');
      if (current !== expected) {
        console.error(`${artefact.path} is stale: run npm run docs:generate`);
        stale += 1;
      }
      continue;
    }
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, expected);
    console.log(`wrote ${artefact.path}`);
  }
  return stale === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.includes('--check'));
