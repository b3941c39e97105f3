import cluster from 'node:cluster';
import { pino } from 'pino';
import { buildApp, type BuiltApp } from './app.js';
import { seedBanner } from './bootstrap/seed.js';
import { runPrimary, seedOnce } from './cluster.js';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { logStream } from './ops/log-stream.js';
import { prepareVinDatabase } from './providers/vin-offline/vin-startup.js';

/**
 * Listens and handles signals; everything else is in buildApp (STYLE.md 9). With WORKERS > 1 this
 * process becomes the cluster primary (src/cluster.ts) once the first-start work is done, and
 * each worker runs this file again as a plain server.
 */
async function main(): Promise<void> {
  process.on('SIGTERM', exitDuringStartup);
  process.on('SIGINT', exitDuringStartup);
  let config: Config;
  let workers: number;
  try {
    config = loadConfig();
    workers = config.workers;
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`vehicle-lookup: configuration error: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }

  if (cluster.isWorker) {
    await serve(config, await buildApp(config));
    return;
  }
  const built = await buildApp(config);
  const banner = await firstStart(config, built);
  // The banner's curl example must work the moment it is read, so it is printed once the service
  // listens (before, a client acting on it at once could be refused). The key is shown only this
  // once, so every way out before that prints it too: failing to listen, a signal during start-up,
  // an error while handing over to the cluster.
  let announced = false;
  const announce = (): void => {
    if (banner === undefined || announced) return;
    announced = true;
    process.stdout.write(`${banner}\n`);
  };
  if (workers === 1) {
    try {
      await serve(config, built, announce);
    } finally {
      announce();
    }
    return;
  }
  try {
    // The workers open the store themselves; the primary keeps no connection to it. The interval
    // keeps this process alive until close() settles, whatever closing waits on: with nothing else
    // pending, Node would exit (code 0) before it ends.
    const alive = setInterval(() => undefined, 1000);
    try {
      await built.app.close();
    } finally {
      clearInterval(alive);
    }
    releaseStartupSignals();
    runPrimary({ workers, log: pino({ level: config.logLevel }, logStream(config.logFormat)), onReady: announce });
  } catch (error) {
    announce();
    throw error;
  }
}

/**
 * Once per start, before anything listens: in the single process, or in the cluster primary
 * before it forks, so workers never race each other for it. Returns the first-start banner (the
 * demo key, shown once) when this start seeded the store.
 */
async function firstStart(config: Config, built: BuiltApp): Promise<string | undefined> {
  // Unpacks the offline VIN database on first start, before any request can need it (issue 4).
  await prepareVinDatabase(config.vin, built.app.log);
  if (!config.seedOnEmptyStore) return undefined;
  const seeded = await seedOnce(built.services, built.app.log);
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return seeded ? seedBanner(seeded, config.baseUrl ?? `http://${shownHost}:${config.port}`) : undefined;
}

/**
 * A signal before the service listens (first start unpacks the VIN database and seeds the store)
 * ends the process at once, as Node's default would. Said explicitly because in a container Node
 * is PID 1, for which the kernel has no default action: without a handler, `docker stop` during
 * start-up would wait for its SIGKILL. The VIN copy is renamed into place only when complete, so
 * an exit mid-way leaves nothing half-written; the next start makes it again.
 */
function exitDuringStartup(signal: NodeJS.Signals): void {
  console.error(`vehicle-lookup: ${signal} during start-up; exiting`);
  process.exit(signal === 'SIGINT' ? 130 : 143);
}

/** Hands the signals over to whoever stops the running service (serve, or the cluster primary). */
function releaseStartupSignals(): void {
  process.off('SIGTERM', exitDuringStartup);
  process.off('SIGINT', exitDuringStartup);
}

/** Listens, and stops gracefully on SIGTERM/SIGINT; `beforeExit` runs before a signal ends the process. */
async function serve(config: Config, built: BuiltApp, beforeExit: () => void = () => undefined): Promise<void> {
  const { app } = built;
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    beforeExit();
    app.log.info({ signal }, 'shutting down: finishing requests in flight');
    built.drain();
    const force = setTimeout(() => {
      app.log.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  releaseStartupSignals();
  process.on('SIGTERM', () => { stop('SIGTERM'); });
  process.on('SIGINT', () => { stop('SIGINT'); });

  await app.listen({ port: config.port, host: config.host });
  app.log.info({ storage: built.services.storage.description }, 'vehicle-lookup ready');
}

main().catch((error: unknown) => {
  console.error('vehicle-lookup failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
