import { buildApp } from './app.js';
import { seedBanner, seedEmptyStore } from './bootstrap/seed.js';
import { ConfigError, loadConfig, type Config } from './config.js';

/** Listens and handles signals; everything else is in buildApp (STYLE.md 9). */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`vehicle-lookup: configuration error: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }

  const built = await buildApp(config);
  const { app } = built;
  if (config.seedOnEmptyStore) {
    const seeded = await seedEmptyStore(built.services);
    const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    if (seeded) process.stdout.write(`${seedBanner(seeded, config.baseUrl ?? `http://${shownHost}:${config.port}`)}\n`);
  }

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
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
  process.on('SIGTERM', () => { stop('SIGTERM'); });
  process.on('SIGINT', () => { stop('SIGINT'); });

  await app.listen({ port: config.port, host: config.host });
  app.log.info({ storage: built.services.storage.description }, 'vehicle-lookup ready');
}

main().catch((error: unknown) => {
  console.error('vehicle-lookup failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
