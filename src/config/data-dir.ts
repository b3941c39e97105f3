import { resolve } from 'node:path';
import type { EnvReader } from './env-reader.js';

/**
 * `DATA_DIR` (default ./data), resolved against the working directory. Its own module because the
 * store (src/config/config.ts) and the offline VIN database (vin-config.ts) both place files under it,
 * and the `vin` CLI commands read it without the rest of the configuration.
 */
export function readDataDir(env: EnvReader): string {
  return resolve(env.text('DATA_DIR') ?? './data');
}
