import { systemClock, type Clock } from '../../shared/clock.js';
import { realWaitClock, type WaitClock } from '../../shared/wait-clock.js';
import { UpstreamError } from './upstream-error.js';
import type { UpstreamMonitor } from './upstream-monitor.js';

/** Attempts per request: the first and, where allowed, one retry (issue 4). */
const MAX_ATTEMPTS = 2;

export interface UpstreamHttpOptions {
  /** Provider name, for metrics and logs ("dvla"). */
  readonly provider: string;
  /** Longest wait for one attempt (connect, headers and body), in milliseconds. */
  readonly timeoutMs: number;
  /**
   * Longest time one `request()` may take in all: both attempts and any Retry-After wait. A 429
   * whose Retry-After does not fit in what is left is given up at once instead of waited for.
   */
  readonly budgetMs: number;
  readonly monitor: UpstreamMonitor;
  /** Largest response body accepted, in bytes (default 2 MiB); larger ones are a `bad-response`. */
  readonly maxResponseBytes?: number;
  /** Pause before retrying after a timeout, a network error or a 5xx (default 100 ms). */
  readonly retryDelayMs?: number;
  /** For Retry-After given as an HTTP date. */
  readonly clock?: Clock;
  /**
   * What the request budget is measured on and the pauses before a retry (including a
   * Retry-After wait) sleep on; default `realWaitClock`. Each attempt's timeout stays a real timer:
   * it is what stops waiting on an upstream that does not answer.
   */
  readonly wait?: WaitClock;
}

export interface UpstreamRequest {
  readonly method: 'GET' | 'POST';
  /** Absolute URL. Keep secrets out of it: put keys in headers (URLs end up in proxies' logs). */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /**
   * True when sending the request twice does no harm, which allows the retry after a timeout, a
   * network error or a 5xx. Default: true for GET, false for POST; a POST that only reads (DVLA VES
   * puts the plate in a POST body to keep it out of URLs) or an OAuth token request may say true.
   * A 429 is retried (after Retry-After) either way: the upstream refused it without acting on it.
   */
  readonly idempotent?: boolean;
  /** Metrics label naming the endpoint ("lookup", "token"); default "lookup". */
  readonly endpoint?: string;
  /**
   * End of the caller's overall budget, on the client's wait clock: a lookup that makes several
   * requests (a token, then the call, then the call again after a 401) passes one deadline to all
   * of them so together they stay within one budget. See `UpstreamHttpClient.deadlineIn`.
   */
  readonly deadline?: number;
  /**
   * True for an upstream that answers its application errors with HTTP 500 and the message as
   * the body (ASMX: the original's "Lookup failed"): a 5xx is then returned to the adapter to read
   * instead of thrown, and never retried.
   */
  readonly readServerErrors?: boolean;
  /**
   * True for a paid upstream whose 429 body says which limit was hit (CarsXE's monthly quota with
   * its `usage`, UKVD r2's daily-limit status codes): the 429 is returned to the adapter to read
   * instead of waited on and retried (commercial-upstreams.md §1.6, §2.2).
   */
  readonly readRateLimits?: boolean;
}

/** An HTTP answer the client did not treat as a failure: anything but 5xx and 429. */
export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Headers;
  /** The body as text (UTF-8). */
  readonly text: string;
}

type AttemptResult = { readonly kind: 'response'; readonly response: UpstreamResponse } | { readonly kind: 'timeout' } | { readonly kind: 'network'; readonly code: string };

/**
 * Milliseconds to wait from a Retry-After header (RFC 9110 §10.2.3: delay-seconds or an HTTP
 * date), or undefined when it is absent or unreadable.
 */
export function retryAfterMs(value: string | null, now: Date): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date) || !/[a-z]/i.test(text)) return undefined;
  return Math.max(0, date - now.getTime());
}

/** The error code of a failed fetch (`ECONNREFUSED`, `UND_ERR_SOCKET`...), never its message. */
function networkCode(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = cause?.code ?? (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? code : 'unknown';
}

async function readBody(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw new UpstreamError('bad-response', `response of ${declared} bytes is larger than the ${limit} byte limit`, response.status);
  }
  if (!response.body) return '';
  // Node's fetch types leave the chunk type open; undici yields Uint8Array chunks.
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new UpstreamError('bad-response', `response is larger than the ${limit} byte limit`, response.status);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * HTTP for upstream adapters, on Node's global fetch (undici). One `request()`:
 * - gives each attempt `timeoutMs` (headers and body), and the whole request `budgetMs`;
 * - retries once, after `retryDelayMs`, on a timeout, a network error or a 5xx, when the request
 *   is idempotent;
 * - on 429 waits for Retry-After and retries once, if the wait fits in the budget; otherwise, or
 *   without Retry-After, fails at once as `rate-limited` (never hangs the caller);
 * - follows no redirects (a redirect could carry our key headers to another host): a 3xx comes
 *   back as a response, which adapters treat as unexpected;
 * - returns every other response (2xx, 3xx, 4xx) for the adapter to interpret, and throws
 *   UpstreamError for timeouts, network errors, 5xx and 429.
 * Every attempt is reported to the monitor. Nothing here logs or throws a URL, header or body.
 */
export class UpstreamHttpClient {
  private readonly maxBytes: number;
  private readonly retryDelayMs: number;
  private readonly clock: Clock;
  private readonly wait: WaitClock;

  constructor(private readonly options: UpstreamHttpOptions) {
    this.maxBytes = options.maxResponseBytes ?? 2 * 1024 * 1024;
    this.retryDelayMs = options.retryDelayMs ?? 100;
    this.clock = options.clock ?? systemClock;
    this.wait = options.wait ?? realWaitClock;
  }

  /** A deadline `ms` from now, for `UpstreamRequest.deadline`. */
  deadlineIn(ms: number): number {
    return this.wait.now() + ms;
  }

  get provider(): string {
    return this.options.provider;
  }

  async request(request: UpstreamRequest): Promise<UpstreamResponse> {
    const { timeoutMs, budgetMs } = this.options;
    const deadline = Math.min(this.deadlineIn(budgetMs), request.deadline ?? Number.POSITIVE_INFINITY);
    const left = (): number => deadline - this.wait.now();
    const idempotent = request.idempotent ?? request.method === 'GET';
    const endpoint = request.endpoint ?? 'lookup';
    for (let attempt = 1; ; attempt += 1) {
      const allowed = Math.min(timeoutMs, left());
      if (allowed <= 0) throw new UpstreamError('timeout', 'no time left in the request budget');
      const result = await this.attempt(request, endpoint, allowed, attempt);
      const mayRetry = attempt < MAX_ATTEMPTS;

      if (result.kind !== 'response') {
        const failure =
          result.kind === 'timeout'
            ? new UpstreamError('timeout', `no answer within ${Math.round(allowed)} ms (attempt ${attempt})`)
            : new UpstreamError('network', `network error ${result.code} (attempt ${attempt})`);
        if (mayRetry && idempotent && left() > this.retryDelayMs) {
          await this.retry(endpoint, result.kind, this.retryDelayMs);
          continue;
        }
        throw failure;
      }

      const { response } = result;
      if (response.status >= 500 && request.readServerErrors === true) return response;
      if (response.status >= 500) {
        if (mayRetry && idempotent && left() > this.retryDelayMs) {
          await this.retry(endpoint, '5xx', this.retryDelayMs);
          continue;
        }
        throw new UpstreamError('server-error', `HTTP ${response.status}${attempt > 1 ? ' on the retry' : ''}`, response.status);
      }
      if (response.status === 429 && request.readRateLimits === true) return response;
      if (response.status === 429) {
        const wait = retryAfterMs(response.headers.get('retry-after'), this.clock.now());
        if (wait === undefined) throw new UpstreamError('rate-limited', 'HTTP 429 without Retry-After', 429);
        if (!mayRetry) throw new UpstreamError('rate-limited', 'HTTP 429 on the retry', 429);
        const remaining = left();
        if (wait >= remaining) {
          throw new UpstreamError('rate-limited', `HTTP 429: Retry-After ${Math.ceil(wait / 1000)} s exceeds the ${Math.max(0, Math.floor(remaining))} ms left of the request budget`, 429);
        }
        await this.retry(endpoint, '429', wait);
        continue;
      }
      return response;
    }
  }

  private async retry(endpoint: string, reason: string, waitMs: number): Promise<void> {
    this.options.monitor.emit({ type: 'retry', provider: this.options.provider, endpoint, reason, waitMs: Math.round(waitMs) });
    if (waitMs > 0) await this.wait.sleep(waitMs);
  }

  private async attempt(request: UpstreamRequest, endpoint: string, timeoutMs: number, attempt: number): Promise<AttemptResult> {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      controller.abort();
    }, timeoutMs);
    const started = performance.now();
    const report = (outcome: string): void => {
      this.options.monitor.emit({ type: 'request', provider: this.options.provider, endpoint, outcome, seconds: (performance.now() - started) / 1000, attempt });
    };
    let status = 0;
    try {
      const response = await fetch(request.url, {
        method: request.method,
        headers: request.headers ?? {},
        ...(request.body !== undefined ? { body: request.body } : {}),
        redirect: 'manual',
        signal: controller.signal,
      });
      status = response.status;
      const text = await readBody(response, this.maxBytes);
      report(String(status));
      return { kind: 'response', response: { status, headers: response.headers, text } };
    } catch (error) {
      if (controller.signal.aborted) {
        report('timeout');
        return { kind: 'timeout' };
      }
      if (error instanceof UpstreamError) {
        report(String(status));
        throw error;
      }
      report('network');
      return { kind: 'network', code: networkCode(error) };
    } finally {
      clearTimeout(timer);
    }
  }
}
