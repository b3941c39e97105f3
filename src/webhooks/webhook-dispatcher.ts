import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Clock } from '../shared/clock.js';
import type { Storage } from '../storage/create-database.js';
import { webhookHeaders } from './webhook-signature.js';
import { privateAddressGuard, webhookUrlProblem } from './webhook-url.js';
import type { AttemptOutcome, EndpointWithSecrets, WebhookMessage, WebhookRepository } from './webhook.repository.js';

export interface WebhookDispatcherOptions {
  /** Waits before the 2nd, 3rd... attempt; attempts = length + 1 (WEBHOOK_RETRY_SCHEDULE). */
  readonly retryScheduleMs: readonly number[];
  /** Longest an attempt may take, connection to last byte (WEBHOOK_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /** How often the outbox is polled for due messages (WEBHOOK_POLL_MS). */
  readonly pollMs: number;
  /** Deliver to private and loopback addresses (WEBHOOK_ALLOW_PRIVATE_URLS). */
  readonly allowPrivateUrls: boolean;
  /** Attempts in flight at once, per instance (each claims only what it can start). */
  readonly concurrency?: number;
  readonly log?: { warn(message: string, error?: unknown): void };
}

/** The most of a receiver's answer we read; the rest is cut off. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/**
 * How much of the answer the delivery log keeps (issue 26 item 15): enough for an error message or
 * the start of an error page, as Svix and Stripe show; a receiver's whole page is no log entry.
 */
export const RESPONSE_EXCERPT_BYTES = 1024;
/** How long a claim outlives an attempt's timeout before another instance may take it over. */
const LEASE_MARGIN_MS = 30_000;

/**
 * Sends the outbox. It runs in its own loop (a timer, woken early when this instance enqueues),
 * never awaited by a lookup, so a receiver that fails or hangs costs lookups nothing. It claims
 * due messages with a lease (one instance sends a message at a time), as many as it has free
 * slots, signs and posts each with a timeout, logs the attempt, and settles the message:
 * delivered, due again after the next wait of the retry schedule, or failed once the attempts are
 * spent. A finished attempt frees its slot at once, so a receiver that hangs holds one slot, not
 * the others' deliveries.
 */
export class WebhookDispatcher {
  private readonly owner = `sender_${randomBytes(9).toString('base64url')}`;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  /** Not polling: before `start` and after `close`. */
  private stopped = true;
  /** `close` was called: a drain in progress ends after its current batch. */
  private closing = false;
  /** Requests in flight, ended by `close` (their messages are retried, by this or another instance). */
  private readonly inFlight = new Set<{ destroy(error?: Error): void }>();
  /** Attempts started and not yet settled. */
  private readonly active = new Set<Promise<void>>();

  constructor(
    private readonly repository: WebhookRepository,
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly clock: Clock,
    private readonly options: WebhookDispatcherOptions,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Messages were committed: send them now rather than at the next poll. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /** Stops polling, ends the attempts in flight (recorded as failed, retried later) and waits for them. */
  async close(): Promise<void> {
    this.stopped = true;
    this.closing = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const req of this.inFlight) req.destroy(new Error('the server is shutting down'));
    await this.running;
    await Promise.all(this.active);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.pump()
        .then(() => undefined)
        .catch((error: unknown) => this.options.log?.warn('webhook delivery round failed', error))
        .finally(() => {
          this.running = undefined;
          if (this.stopped) return;
          const soon = this.again;
          this.again = false;
          this.schedule(soon ? 0 : this.options.pollMs);
        });
    }, delayMs);
    this.timer.unref();
  }

  /** Claims as many due messages as there are free slots and starts them; returns how many. */
  private async pump(): Promise<number> {
    const slots = this.options.concurrency ?? 16;
    let started = 0;
    for (;;) {
      const free = slots - this.active.size;
      if (free <= 0 || this.closing) return started;
      const now = this.clock.now();
      const leaseUntil = new Date(now.getTime() + this.options.timeoutMs + LEASE_MARGIN_MS).toISOString();
      const claimed = await this.repository.claimDue(this.owner, now.toISOString(), leaseUntil, free);
      for (const message of claimed) {
        const attempt: Promise<void> = this.attempt(message)
          .catch((error: unknown) => this.options.log?.warn(`webhook message ${message.id}: attempt not recorded`, error))
          .finally(() => {
            this.active.delete(attempt);
            this.wake();
          });
        this.active.add(attempt);
      }
      started += claimed.length;
      if (claimed.length < free) return started;
    }
  }

  /**
   * Sends everything due now and waits for those attempts, and for a background round already
   * claiming (its claim may hold the very message the caller just queued); returns how many
   * attempts this call started.
   */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const background = this.running;
      if (background) await background;
      const started = await this.pump();
      await Promise.all(this.active);
      total += started;
      if (started === 0 && this.running === undefined) return total;
    }
  }

  private async attempt(message: WebhookMessage): Promise<void> {
    const endpoint = await this.repository.endpoint(message.endpointId);
    const startedAt = this.clock.now();
    const outcome: AttemptOutcome =
      endpoint && endpoint.enabled
        ? await this.post(endpoint, message, startedAt)
        : { startedAt: startedAt.toISOString(), statusCode: null, durationMs: 0, error: 'endpoint disabled', succeeded: false };
    const settledAt = this.clock.now();
    const wait = this.options.retryScheduleMs[message.attempts - 1];
    const retryAt = outcome.succeeded || !endpoint?.enabled || wait === undefined ? null : new Date(settledAt.getTime() + wait).toISOString();
    const settled = await this.storage.transaction((tx) => this.repository.settle(tx, message, this.owner, outcome, retryAt, settledAt.toISOString()));
    if (!settled) this.options.log?.warn(`webhook message ${message.id}: lease lost before the attempt was recorded`);
  }

  /** One signed POST; never throws: every failure is an outcome. */
  private post(endpoint: EndpointWithSecrets, message: WebhookMessage, startedAt: Date): Promise<AttemptOutcome> {
    const started = performance.now();
    const finish = (statusCode: number | null, error: string | null, responseBody: string | null = null): AttemptOutcome => ({
      startedAt: startedAt.toISOString(),
      statusCode,
      durationMs: Math.round(performance.now() - started),
      error,
      succeeded: error === null && statusCode !== null && statusCode >= 200 && statusCode < 300,
      responseBody,
    });
    const problem = webhookUrlProblem(endpoint.url, this.options.allowPrivateUrls);
    if (problem !== undefined) return Promise.resolve(finish(null, problem));

    const secrets = [endpoint.secret];
    if (endpoint.previousSecret !== null && endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil > startedAt.toISOString()) {
      secrets.push(endpoint.previousSecret);
    }
    const body = message.payload;
    const headers = {
      ...webhookHeaders(secrets, message.id, Math.floor(startedAt.getTime() / 1000), body),
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'vehicle-lookup-webhooks/1',
    };
    const url = new URL(endpoint.url);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      let settled = false;
      /** The answer's first RESPONSE_EXCERPT_BYTES; undefined until an answer came. */
      let excerpt: Buffer[] | undefined;
      let kept = 0;
      const done = (statusCode: number | null, error: string | null): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        this.inFlight.delete(req);
        // Without end(): a character cut in two at the limit is left out rather than shown as U+FFFD.
        const body = excerpt === undefined ? null : new StringDecoder('utf8').write(Buffer.concat(excerpt));
        resolve(finish(statusCode, error, body));
      };
      const req = send(url, {
        method: 'POST',
        headers,
        ...(this.options.allowPrivateUrls ? {} : { lookup: privateAddressGuard }),
        // One connection per attempt: no idle sockets to a customer's server outlive it.
        agent: false,
      });
      this.inFlight.add(req);
      const deadline = setTimeout(() => {
        done(null, `timed out after ${this.options.timeoutMs} ms`);
        req.destroy();
      }, this.options.timeoutMs);
      req.on('response', (res: IncomingMessage) => {
        let read = 0;
        excerpt = [];
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (kept < RESPONSE_EXCERPT_BYTES) {
            const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - kept);
            excerpt?.push(part);
            kept += part.length;
          }
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('end', () => {
          done(res.statusCode ?? null, res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode ?? '?'}`);
        });
        res.on('close', () => {
          done(res.statusCode ?? null, res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode ?? '?'}`);
        });
        res.on('error', () => {
          // 'close' follows and settles the attempt with the status already received.
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        done(null, error.code !== undefined ? `${error.code}: ${error.message}` : error.message);
      });
      req.end(body);
    });
  }
}
