import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { corgiPackage } from '../../src/config/vin-config.js';
import { installVinDatabase } from '../../src/providers/vin-offline/vin-database.js';

/**
 * One unpacked, indexed copy of the vPIC database per machine and corgi version, shared by every
 * test file and `npm run bench:vin` (each would otherwise unpack 86 MB into its own temporary
 * DATA_DIR): `$TMPDIR/vehicle-lookup-vin-<version>/`. Installing takes about 2 s once; the
 * install lock makes parallel test workers wait for one another instead of racing.
 */
export function sharedVinDatabasePath(): string {
  const { version } = corgiPackage();
  return join(tmpdir(), `vehicle-lookup-vin-${version}`, `vpic-corgi-${version}.sqlite`);
}

/** Installs the shared copy when it is missing or outdated, and returns its path. */
export async function sharedVinDatabase(): Promise<string> {
  const path = sharedVinDatabasePath();
  await installVinDatabase(path);
  return path;
}
