/**
 * Writes the generated docs (docs/operations.md) from the catalogue. `--check` writes nothing and
 * exits 1 when the committed file is stale, for CI; test/docs/operations-doc.test.ts checks the same.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Catalogue } from '../src/catalogue/catalogue.js';
import { renderOperationsMarkdown } from '../src/catalogue/catalogue-docs.js';

const OPERATIONS_DOC_PATH = fileURLToPath(new URL('../docs/operations.md', import.meta.url));

async function main(check: boolean): Promise<number> {
  const expected = renderOperationsMarkdown(new Catalogue());
  if (check) {
    const current = await readFile(OPERATIONS_DOC_PATH, 'utf8').catch(() => '');
    if (current === expected) return 0;
    console.error('docs/operations.md is stale: run npm run docs:generate');
    return 1;
  }
  await writeFile(OPERATIONS_DOC_PATH, expected);
  console.log('wrote docs/operations.md');
  return 0;
}

process.exitCode = await main(process.argv.includes('--check'));
