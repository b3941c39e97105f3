import { join, resolve } from 'node:path';
import { ConfigError } from '../../config.js';
import { corgiPackage } from './vin-database.js';

/** Offline VIN decoding settings (README "Configuration"; docs/vin-decoding.md). */
export interface VinConfig {
  /** `VIN_DECODER`: on (default) or off. Off: VinCheck answers from imported records only. */
  readonly enabled: boolean;
  /** The unpacked, indexed vPIC database file this process reads (and start-up installs). */
  readonly databasePath: string;
  /** True when `VIN_DB_PATH` chose the path rather than `DATA_DIR`. */
  readonly explicitPath: boolean;
}

const ON = new Set(['1', 'true', 'yes', 'on']);
const OFF = new Set(['0', 'false', 'no', 'off']);

function nonEmpty(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The default file: `$DATA_DIR/vin/vpic-corgi-<version>.sqlite`. The corgi version is in the
 * name so an upgrade of the package installs its own copy next to (then instead of) the old one.
 */
export function defaultVinDatabasePath(dataDir: string): string {
  return join(dataDir, 'vin', `vpic-corgi-${corgiPackage().version}.sqlite`);
}

/**
 * Reads VIN_DECODER, VIN_DB_PATH and DATA_DIR. DATA_DIR is resolved exactly as src/config.ts
 * resolves it (default ./data), so start-up installs where the provider reads.
 */
export function loadVinConfig(env: NodeJS.ProcessEnv): VinConfig {
  const raw = nonEmpty(env, 'VIN_DECODER')?.toLowerCase() ?? 'on';
  if (!ON.has(raw) && !OFF.has(raw)) throw new ConfigError(`VIN_DECODER must be on or off (got "${env.VIN_DECODER ?? ''}")`);
  const explicit = nonEmpty(env, 'VIN_DB_PATH');
  const databasePath = explicit !== undefined ? resolve(explicit) : defaultVinDatabasePath(resolve(nonEmpty(env, 'DATA_DIR') ?? './data'));
  return Object.freeze({ enabled: ON.has(raw), databasePath, explicitPath: explicit !== undefined });
}
