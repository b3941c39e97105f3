import cluster, { type Worker } from 'node:cluster';
import { seedEmptyStore, type SeedResult } from './bootstrap/seed.js';
import { loadConfig, MAX_WORKERS } from './config/config.js';
import type { Services } from './services.js';

export { MAX_WORKERS };

/** `WORKERS` as the configuration reads it (1 to 64; unset or 1: one process and no cluster). */
export function workerCount(env: NodeJS.ProcessEnv): number {
  return loadConfig(env).workers;
}

/** The part of a pino logger the primary uses. */
export interface ClusterLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface ClusterOptions {
  readonly workers: number;
  readonly log: ClusterLog;
  /**
   * Called once: when the first worker listens (the port then answers), or when the cluster stops
   * before that (it gives up or is told to stop), so what it announces is shown either way.
   */
  readonly onReady?: () => void;
}

/**
 * seedEmptyStore, for instances started together on one new store (plain processes; the cluster
 * runs it once, in its primary). Both may find the store empty; the account name is unique, so
 * exactly one creates the demo account (and prints its key) and the other's insert fails. That
 * failure, with the store no longer empty, means another instance seeded it: not a reason to
 * refuse to start. (The sample records are upserted, so importing them twice is harmless.)
 */
export async function seedOnce(services: Services, log: Pick<ClusterLog, 'info'>): Promise<SeedResult | undefined> {
  try {
    return await seedEmptyStore(services);
  } catch (error) {
    if (await services.accounts.isEmpty()) throw error;
    log.info({ reason: error instanceof Error ? error.message : String(error) }, 'another instance seeded the new store at the same time');
    return undefined;
  }
}

/** Back-off before restarting a worker that died: 0.5 s, 1 s, 2 s ... at most 30 s. */
const FIRST_RESTART_DELAY_MS = 500;
const MAX_RESTART_DELAY_MS = 30_000;
/** A worker that served this long before dying starts the back-off over. */
const STABLE_UPTIME_MS = 30_000;
/** Workers dying before they listen, in a row, while none is serving: the cluster gives up. */
const MAX_START_FAILURES = 5;
/** Longer than a worker's own shutdown limit (10 s in main.ts), so workers normally finish first. */
const STOP_TIMEOUT_MS = 15_000;

/** The delay before the `streak`-th restart in a row (1-based). */
export function restartDelay(streak: number): number {
  return Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** Math.max(0, streak - 1));
}

/**
 * The cluster primary: forks `workers` processes that run src/main.ts as workers (they listen on
 * the shared port; node:cluster hands connections round-robin), restarts a worker that dies
 * without being asked to, and turns SIGTERM or SIGINT into a graceful stop of every worker. It
 * opens no store and serves nothing itself; first-start work (migrations, seeding) is done by
 * main.ts before this is called, so it happens once.
 */
export function runPrimary(options: ClusterOptions): void {
  const { log, workers } = options;
  const startedAt = new Map<Worker, number>();
  const listening = new Set<Worker>();
  const restarts = new Set<NodeJS.Timeout>();
  let streak = 0;
  let startFailures = 0;
  let announced = false;
  /** onReady has been called. */
  let readyAnnounced = false;
  let stopping = false;
  let exitCode = 0;

  const fork = (): void => {
    startedAt.set(cluster.fork(), Date.now());
  };

  const stop = (reason: string, code: number): void => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    if (!readyAnnounced) {
      readyAnnounced = true;
      options.onReady?.();
    }
    for (const timer of restarts) clearTimeout(timer);
    restarts.clear();
    log.info({ reason, workers: startedAt.size }, 'stopping the workers: they finish the requests in flight');
    // Each worker's own SIGTERM handler drains and closes it (main.ts).
    for (const worker of startedAt.keys()) worker.process.kill('SIGTERM');
    if (startedAt.size === 0) process.exit(exitCode);
    setTimeout(() => {
      log.error({ workers: startedAt.size }, `workers still running ${STOP_TIMEOUT_MS / 1000} s after SIGTERM; killing them`);
      for (const worker of startedAt.keys()) worker.process.kill('SIGKILL');
      process.exit(1);
    }, STOP_TIMEOUT_MS).unref();
  };

  cluster.on('listening', (worker, address) => {
    listening.add(worker);
    startFailures = 0;
    if (listening.size === 1 && !readyAnnounced) {
      readyAnnounced = true;
      options.onReady?.();
    }
    log.info({ worker: worker.id, workerPid: worker.process.pid, port: address.port }, 'worker listening');
    if (!announced && listening.size === workers) {
      announced = true;
      log.info({ workers, port: address.port }, 'vehicle-lookup cluster ready');
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const uptime = Date.now() - (startedAt.get(worker) ?? Date.now());
    startedAt.delete(worker);
    const served = listening.delete(worker);
    if (stopping) {
      if (code !== 0) exitCode = 1;
      if (startedAt.size === 0) process.exit(exitCode);
      return;
    }
    // Any exit the primary did not ask for is unexpected, a clean one included.
    streak = uptime >= STABLE_UPTIME_MS ? 1 : streak + 1;
    if (!served) startFailures += 1;
    if (!served && listening.size === 0 && startFailures >= MAX_START_FAILURES) {
      log.error({ startFailures }, 'workers keep failing before they listen and none is serving; giving up (see their errors above)');
      stop('workers cannot start', 1);
      return;
    }
    const delay = restartDelay(streak);
    log.error({ worker: worker.id, workerPid: worker.process.pid, code, signal, uptimeMs: uptime, restartInMs: delay }, 'a worker died unexpectedly; starting another');
    const timer = setTimeout(() => {
      restarts.delete(timer);
      if (!stopping) fork();
    }, delay);
    restarts.add(timer);
  });

  process.on('SIGTERM', () => {
    stop('SIGTERM', 0);
  });
  process.on('SIGINT', () => {
    stop('SIGINT', 0);
  });

  log.info({ workers }, 'starting the workers');
  for (let i = 0; i < workers; i += 1) fork();
}
