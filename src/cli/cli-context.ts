import { hostname, userInfo } from 'node:os';
import type { Actor } from '../audit/audit-log.js';
import { loadCoreConfig, type CoreConfig } from '../config/config.js';
import { openRedis } from '../redis/redis-services.js';
import { createCoreServices, type CoreServices } from '../services.js';
import { systemClock } from '../shared/clock.js';
import { openStorage } from '../storage/create-database.js';

/** Where a command writes; tests capture it instead of spawning a process. */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
  /** Redraws a one-line progress indicator (only called when `interactive`). */
  progress(text: string): void;
  /** True when progress lines may be drawn (an interactive terminal). */
  readonly interactive: boolean;
}

export const processOutput: CliOutput = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  progress: (text) => process.stderr.write(`\r${text}   `),
  interactive: process.stderr.isTTY,
};

/**
 * Opens the configured store (DATA_DIR / DATABASE_URL), runs `work` with the core services, and
 * always closes it. It reads only the core configuration (store, Redis, rate limits) and builds no
 * lookup pipeline, so provider settings cannot stop an account or import command. With REDIS_URL,
 * account changes are announced to the running instances as the server announces its own
 * (connecting only when a command changes an account); a failure to announce is a warning on `io`.
 */
export async function withServices<T>(env: NodeJS.ProcessEnv, work: (services: CoreServices, config: CoreConfig) => Promise<T>, io: CliOutput = processOutput): Promise<T> {
  const config = loadCoreConfig(env);
  const storage = await openStorage({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: config.dbPoolSize, connectTimeoutMs: config.dbConnectTimeoutMs, sqliteSynchronous: config.sqliteSynchronous });
  const redis =
    config.redisUrl === undefined
      ? undefined
      : await openRedis(
          { url: config.redisUrl, keyPrefix: config.redisKeyPrefix },
          {
            name: 'vehicle-lookup-cli',
            subscribe: false,
            log: {
              warn: (message) => {
                io.err(`vehicle-lookup: warning: ${message}`);
              },
              info: () => undefined,
            },
          },
        );
  try {
    // Changes made here are recorded in the audit log as the operating-system user's (issue 16).
    return await work(createCoreServices(storage, { clock: systemClock, actor: cliActor(), ...(redis ? { accountChanges: redis.accountChanges } : {}) }), config);
  } finally {
    await redis?.close();
    await storage.close();
  }
}

/** The audit log's actor for changes made with the CLI: the operating-system user on this host. */
export function cliActor(): Actor {
  let name = 'unknown';
  try {
    name = userInfo().username;
  } catch {
    // No passwd entry (some containers): the audit row still says the CLI made the change.
  }
  return { kind: 'cli', name, address: hostname() };
}

/** Errors a command reports as a plain message and exit code 1 (no stack trace). */
export class CliError extends Error {
  override readonly name = 'CliError';
}

/** Ends a command with an exit code after it has printed its own report. */
export class CliExit extends Error {
  override readonly name = 'CliExit';
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

export function parsePositiveInt(text: string, what: string, allowZero = false): number {
  if (!/^\d+$/.test(text)) throw new CliError(`${what} must be a whole number (got "${text}")`);
  const n = Number(text);
  if (!allowZero && n === 0) throw new CliError(`${what} must be at least 1`);
  return n;
}

/** `--since` accepts a date (2026-11-01) or a full ISO timestamp; returns ISO UTC. */
export function parseSince(text: string): string {
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(ms)) throw new CliError(`--since must be a date such as 2026-11-01 (got "${text}")`);
  return new Date(ms).toISOString();
}
