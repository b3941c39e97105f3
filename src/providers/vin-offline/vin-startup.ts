import type { VinConfig } from '../../config/vin-config.js';
import { installVinDatabase, vinDatabaseStatus } from './vin-database.js';

/** The part of the server's logger (pino) start-up uses. */
export interface StartupLog {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * Start-up hook (src/main.ts, before listening): installs the VIN database under DATA_DIR when
 * it is not there yet (first start: about 2 s), so no request ever waits for it. A failure is
 * logged and start-up goes on: the rest of the service works, and VinCheck answers from imported
 * records, or "temporarily unavailable", until `vehicle-lookup vin install-db` succeeds.
 */
export async function prepareVinDatabase(config: VinConfig, log: StartupLog): Promise<void> {
  if (!config.enabled) {
    log.info({ vinDecoder: 'off' }, 'offline VIN decoding is off (VIN_DECODER=off)');
    return;
  }
  const status = vinDatabaseStatus(config.databasePath);
  if (status.installed) {
    log.info({ path: status.path, corgi: status.corgiVersion }, 'offline VIN decoding ready');
    return;
  }
  log.info({ path: config.databasePath, reason: status.reason }, 'installing the offline VIN database (first start only)');
  try {
    const outcome = await installVinDatabase(config.databasePath, { onProgress: (message) => { log.info({ path: config.databasePath }, message); } });
    log.info({ path: outcome.path, megabytes: Math.round(outcome.bytes / 1e6), seconds: Number(outcome.seconds.toFixed(1)), corgi: outcome.corgiVersion }, 'offline VIN decoding ready');
  } catch (error) {
    log.error({ err: error, path: config.databasePath }, 'could not install the offline VIN database; VinCheck decodes nothing until `vehicle-lookup vin install-db` succeeds');
  }
}
