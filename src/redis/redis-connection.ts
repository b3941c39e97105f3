import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';

/** Where Redis problems are reported: the server's logger, or the CLI's stderr. */
export interface RedisLog {
  warn(message: string, error?: unknown): void;
  info(message: string): void;
}

export interface RedisConnectionOptions {
  /** `REDIS_URL`: `redis://[user:password@]host:port[/db]` or `rediss://` for TLS. */
  readonly url: string;
  readonly log: RedisLog;
  /** Shown by `CLIENT LIST` (`vehicle-lookup`, `vehicle-lookup-cli`). */
  readonly name: string;
  /** Connect on first use rather than at once (the CLI, which most often needs no Redis at all). */
  readonly lazy?: boolean;
}

/**
 * A command slower than this fails, and the caller falls back (rate limits counted in-process,
 * cache miss): a hung Redis must not hold paid lookups for long.
 */
const COMMAND_TIMEOUT_MS = 250;
const CONNECT_TIMEOUT_MS = 2000;
/** Reconnection delays: 200 ms, 400 ms, ... at most 2 s, for as long as the process runs. */
const retryDelay = (attempt: number): number => Math.min(100 * 2 ** Math.min(attempt, 5), 2000);

/**
 * Reports an outage once when it starts and once when it ends, whatever the number of failures in
 * between (a down Redis fails every request; the log should say so once, not thousands of times).
 */
export class OutageLog {
  private down = false;

  constructor(
    private readonly log: RedisLog,
    private readonly what: string,
    private readonly consequence: string,
  ) {}

  failed(error: unknown): void {
    if (this.down) return;
    this.down = true;
    this.log.warn(`${this.what} failed: ${describeError(error)}; ${this.consequence} until it is back`, error);
  }

  succeeded(): void {
    if (!this.down) return;
    this.down = false;
    this.log.info(`${this.what} works again`);
  }
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The Redis connections of one process: one for commands (rate-limit counters, the shared cache,
 * publishing account changes) and, when subscribed to account changes, one for the subscription
 * (Redis allows only subscription commands on a subscribed connection).
 *
 * Commands are never queued while disconnected (`enableOfflineQueue: false`): they fail at once and
 * the caller falls back, so an outage costs no latency. The connections reconnect on their own.
 */
export class RedisConnection {
  readonly commands: Redis;
  private subscriberClient: Redis | undefined;
  private closed = false;

  constructor(private readonly options: RedisConnectionOptions) {
    this.commands = this.open(options.name);
  }

  /** The subscription connection, opened on first use. */
  subscriber(): Redis {
    this.subscriberClient ??= this.open(`${this.options.name}-subscriber`);
    return this.subscriberClient;
  }

  /** True while commands can be sent. */
  get ready(): boolean {
    return this.commands.status === 'ready';
  }

  /**
   * Resolves true once the client is ready, false as soon as a connection attempt failed or after
   * `timeoutMs`. Start-up waits on this, so the first requests already find Redis connected.
   */
  static whenReady(client: Redis, timeoutMs: number): Promise<boolean> {
    if (client.status === 'ready') return Promise.resolve(true);
    if (client.status === 'end') return Promise.resolve(false);
    // A lazy connection that was never used: connect now (failures arrive as 'error' events too).
    if (client.status === 'wait') client.connect().catch(() => undefined);
    return new Promise((resolve) => {
      const finish = (ok: boolean): void => {
        clearTimeout(timer);
        client.off('ready', onReady).off('error', onFailure).off('end', onFailure);
        resolve(ok);
      };
      const onReady = (): void => {
        finish(true);
      };
      const onFailure = (): void => {
        finish(false);
      };
      const timer = setTimeout(onFailure, timeoutMs);
      client.once('ready', onReady).once('error', onFailure).once('end', onFailure);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.commands, this.subscriberClient].map((client) => (client ? quit(client) : Promise.resolve())));
  }

  private open(name: string): Redis {
    const client = new Redis(this.options.url, {
      connectionName: name,
      lazyConnect: this.options.lazy === true,
      enableOfflineQueue: false,
      // We subscribe again ourselves on every 'ready' (RedisAccountChangeFeed), to know when.
      autoResubscribe: false,
      maxRetriesPerRequest: 1,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: CONNECT_TIMEOUT_MS,
      retryStrategy: retryDelay,
    });
    const outage = new OutageLog(this.options.log, `Redis connection (${name})`, 'running without it');
    // Without an 'error' listener ioredis prints every failed reconnection to the console.
    client.on('error', (error: unknown) => {
      if (!this.closed) outage.failed(error);
    });
    client.on('ready', () => {
      outage.succeeded();
    });
    return client;
  }
}

async function quit(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // Fall through: drop the connection instead.
    }
  }
  client.disconnect();
}

/** A Lua script run by its SHA-1 (EVALSHA), sent whole only when the server does not have it yet. */
export class RedisScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** EVALSHA, loading the script with EVAL the first time (or after SCRIPT FLUSH / a restart). */
  async run(client: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
