import type { Redis } from 'ioredis';
import type { AccountChangeFeed } from '../accounts/account-change-feed.js';
import { describeError, RedisConnection, type RedisLog } from './redis-connection.js';

/** How long publishing waits for a connection that is still being made (the CLI's first command). */
const PUBLISH_WAIT_MS = 1000;

/** The channel account changes are announced on: `{REDIS_KEY_PREFIX}account-changed`. */
export function accountChannel(keyPrefix: string): string {
  return `${keyPrefix}account-changed`;
}

/**
 * AccountChangeFeed over Redis pub/sub. A message is the username of the changed account, or `*`
 * for every account (an operator may send one by hand after editing accounts in SQL:
 * `redis-cli PUBLISH vehicle-lookup:account-changed '*'`).
 *
 * Pub/sub delivers only to connected subscribers: messages sent while this instance was
 * disconnected are lost. So `generation` moves on every (re)subscription and the account cache
 * drops everything then (accountCacheCounter), and `live` is false while disconnected, which puts
 * the cache back on the storage's own freshness rule.
 */
export class RedisAccountChangeFeed implements AccountChangeFeed {
  private handler: (username: string) => void = () => undefined;
  private subscribed = false;
  private currentGeneration = 0;
  private started = false;

  constructor(
    private readonly connection: RedisConnection,
    private readonly channel: string,
    private readonly log: RedisLog,
  ) {}

  get live(): boolean {
    return this.subscribed;
  }

  get generation(): number {
    return this.currentGeneration;
  }

  onChange(handler: (username: string) => void): void {
    this.handler = handler;
  }

  /**
   * Subscribes (and again after every reconnection). Resolves true once subscribed, false when
   * the first attempt failed or took longer than `timeoutMs`; it keeps trying in the background.
   */
  async start(timeoutMs: number): Promise<boolean> {
    if (this.started) return this.subscribed;
    this.started = true;
    const subscriber = this.connection.subscriber();
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.handler(message);
    });
    subscriber.on('close', () => {
      this.subscribed = false;
    });
    const first = new Promise<boolean>((resolve) => {
      subscriber.on('ready', () => {
        void this.subscribe(subscriber).then(resolve);
      });
    });
    if (subscriber.status === 'ready') return this.subscribe(subscriber);
    return (await RedisConnection.whenReady(subscriber, timeoutMs)) ? first : false;
  }

  async publish(username: string): Promise<void> {
    const client = this.connection.commands;
    try {
      if (!(await RedisConnection.whenReady(client, PUBLISH_WAIT_MS))) throw new Error('not connected to Redis');
      await client.publish(this.channel, username);
    } catch (error) {
      this.log.warn(
        `could not announce the change of account ${username} on Redis (${describeError(error)}): other instances see it when their cached copy expires (at most 30 s)`,
        error,
      );
    }
  }

  private async subscribe(subscriber: Redis): Promise<boolean> {
    try {
      await subscriber.subscribe(this.channel);
      // Only now are messages received: anything published before is covered by the new generation.
      this.currentGeneration += 1;
      this.subscribed = true;
      return true;
    } catch (error) {
      this.log.warn(`could not subscribe to ${this.channel} on Redis: ${describeError(error)}`, error);
      return false;
    }
  }
}
