import { fileURLToPath } from 'node:url';
import type { Services } from '../services.js';

/** The bundled sample dataset: fictional vehicles, at least two for every operation. */
export const SAMPLE_DATASET_PATH = fileURLToPath(new URL('../../samples/sample-dataset.jsonl', import.meta.url));

export const DEMO_USERNAME = 'demo';
export const DEMO_CREDITS = 100;
/** A lookup the sample dataset answers; the banner's curl example (a test keeps them in step). */
export const DEMO_EXAMPLE_PATH = '/api/json.aspx/CheckFrance/FK482TR';

export interface SeedResult {
  readonly username: string;
  readonly apiKey: string;
  readonly credits: number;
  readonly sampleRecords: number;
}

/**
 * On an empty store (no accounts yet): creates the demo account and loads the sample dataset.
 * Returns undefined when the store already has accounts, so a restart never seeds twice.
 */
export async function seedEmptyStore(services: Services, samplePath = SAMPLE_DATASET_PATH): Promise<SeedResult | undefined> {
  if (!(await services.accounts.isEmpty())) return undefined;
  const summary = await services.importer.importFile(samplePath, { skipInvalid: false, source: 'sample' });
  if (!summary.committed) throw new Error(`the bundled sample dataset ${samplePath} has ${summary.invalid} invalid lines`);
  const { account, apiKey } = await services.accounts.create(DEMO_USERNAME, DEMO_CREDITS);
  return { username: account.username, apiKey, credits: account.credits, sampleRecords: summary.imported };
}

/** The first-start banner: the key (shown once) and a request to paste. */
export function seedBanner(seed: SeedResult, baseUrl: string): string {
  return [
    '',
    '  vehicle-lookup: new store initialised',
    `  Loaded ${seed.sampleRecords} SAMPLE records (fictional demo data, not real vehicles).`,
    `  Created account "${seed.username}" with ${seed.credits} credits. Its API key, shown only this once:`,
    '',
    `    ${seed.apiKey}`,
    '',
    '  Try it:',
    `    curl -u '${seed.username}:${seed.apiKey}' ${baseUrl}${DEMO_EXAMPLE_PATH}`,
    '',
    '  Lost the key? npm run cli -- accounts rotate-key demo',
    '',
  ].join('\n');
}
