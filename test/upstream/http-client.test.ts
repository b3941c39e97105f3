import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { retryAfterMs, UpstreamHttpClient, type UpstreamHttpOptions } from '../../src/providers/upstream/http-client.js';
import { UpstreamError } from '../../src/providers/upstream/upstream-error.js';
import { UpstreamMonitor, type UpstreamEvent } from '../../src/providers/upstream/upstream-monitor.js';
import { FakeHttpServer } from '../fakes/fake-http-server.js';
import { ManualWaitClock } from '../helpers/manual-wait-clock.js';

let fake: FakeHttpServer;
let events: UpstreamEvent[];
/**
 * The budget's time and the retry pauses: it moves only by what the client sleeps, so no test
 * depends on how fast the machine is. Each attempt's timeout is still a real timer (it is what
 * gives up on a hanging upstream); tests assert on its outcome, never on how long it took.
 */
let wait: ManualWaitClock;

function client(options: Partial<UpstreamHttpOptions> = {}): UpstreamHttpClient {
  const monitor = new UpstreamMonitor();
  monitor.subscribe((e) => events.push(e));
  // The default timeout is far above what the fake takes to answer on a busy machine: only the
  // tests of a timeout set a short one, against a fake that never answers.
  return new UpstreamHttpClient({ provider: 'test', timeoutMs: 20_000, budgetMs: 60_000, monitor, retryDelayMs: 20, wait, ...options });
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('expected an UpstreamError');
}

// A fake per test: a request the client gave up on before it reached the fake may still arrive
// later, and must not be counted by (or take the scripted answer of) the next test.
beforeEach(async () => {
  fake = await FakeHttpServer.start(() => ({ status: 200, json: { ok: true } }));
  events = [];
  wait = new ManualWaitClock({ advanceOnSleep: true });
});
afterEach(async () => fake.close());

describe('upstream HTTP client', () => {
  it('answers a slow upstream that is within the timeout', async () => {
    fake.script({ status: 200, json: { slow: true }, delayMs: 150 });
    const response = await client().request({ method: 'GET', url: `${fake.url}/x` });
    expect(JSON.parse(response.text)).toEqual({ slow: true });
    expect(fake.count()).toBe(1);
  });

  it('gives up on an attempt after the timeout and retries a GET once, then fails as a timeout', async () => {
    fake.script({ hang: true }, { hang: true }, { hang: true });
    const error = await failure(client({ timeoutMs: 300 }).request({ method: 'GET', url: `${fake.url}/x` }));
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe('no answer within 300 ms (attempt 2)');
    // Attempts as the client counts them: an attempt cut off early on a busy machine may never reach the fake.
    expect(wait.sleeps).toEqual([20]);
    expect(events.flatMap((e) => (e.type === 'request' ? [e.outcome] : []))).toEqual(['timeout', 'timeout']);
  });

  it('counts a slow body against the timeout too', async () => {
    // The body's timer starts after the attempt's, and is longer: the timeout fires first however busy the machine.
    fake.script({ status: 200, text: 'late', bodyDelayMs: 1000 }, { status: 200, text: 'late', bodyDelayMs: 1000 });
    const error = await failure(client({ timeoutMs: 300 }).request({ method: 'GET', url: `${fake.url}/x` }));
    expect(error.kind).toBe('timeout');
    expect(events.flatMap((e) => (e.type === 'request' ? [e.outcome] : []))).toEqual(['timeout', 'timeout']);
  });

  it('retries a GET once after a 5xx and returns the answer of the retry', async () => {
    fake.script({ status: 503, text: 'down' });
    const response = await client().request({ method: 'GET', url: `${fake.url}/x` });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toEqual({ ok: true });
    expect(fake.count()).toBe(2);
    expect(events).toContainEqual(expect.objectContaining({ type: 'retry', reason: '5xx' }));
  });

  it('makes at most one retry: a second 5xx fails the request as a server error', async () => {
    fake.script({ status: 500 }, { status: 502 }, { status: 200 });
    const error = await failure(client().request({ method: 'GET', url: `${fake.url}/x` }));
    expect(error.kind).toBe('server-error');
    expect(error.status).toBe(502);
    expect(fake.count()).toBe(2);
  });

  it('does not retry a POST unless it says it is idempotent', async () => {
    fake.script({ status: 500 });
    const error = await failure(client().request({ method: 'POST', url: `${fake.url}/x`, body: '{}' }));
    expect(error.kind).toBe('server-error');
    expect(fake.count()).toBe(1);

    fake.reset();
    fake.script({ status: 500 });
    const response = await client().request({ method: 'POST', url: `${fake.url}/x`, body: '{}', idempotent: true });
    expect(response.status).toBe(200);
    expect(fake.count()).toBe(2);
  });

  it('retries once after a network error and reports it without the error text', async () => {
    const gone = await FakeHttpServer.start(() => ({ status: 200 }));
    const url = gone.url;
    await gone.close();
    const error = await failure(client().request({ method: 'GET', url: `${url}/x` }));
    expect(error.kind).toBe('network');
    expect(error.message).toMatch(/^network error ECONNREFUSED/);
    expect(events.filter((e) => e.type === 'request')).toHaveLength(2);
  });

  it('retries after a dropped connection', async () => {
    fake.script({ reset: true });
    const response = await client().request({ method: 'GET', url: `${fake.url}/x` });
    expect(response.status).toBe(200);
    expect(fake.count()).toBe(2);
  });

  it('waits for Retry-After on a 429 and retries once, even for a POST', async () => {
    fake.script({ status: 429, headers: { 'retry-after': '1' } });
    const response = await client().request({ method: 'POST', url: `${fake.url}/x`, body: '{}' });
    expect(response.status).toBe(200);
    expect(wait.sleeps).toEqual([1000]);
    expect(fake.count()).toBe(2);
    expect(events).toContainEqual(expect.objectContaining({ type: 'retry', reason: '429', waitMs: 1000 }));
  });

  it('gives up at once, as rate limited, when Retry-After is longer than the request budget', async () => {
    fake.script({ status: 429, headers: { 'retry-after': '120' } });
    const error = await failure(client({ budgetMs: 30_000 }).request({ method: 'GET', url: `${fake.url}/x` }));
    expect(error.kind).toBe('rate-limited');
    expect(error.message).toBe('HTTP 429: Retry-After 120 s exceeds the 30000 ms left of the request budget');
    expect(wait.sleeps).toEqual([]);
    expect(fake.count()).toBe(1);
  });

  it('gives up at once on a 429 without Retry-After, and after one wait on a second 429', async () => {
    fake.script({ status: 429 });
    expect((await failure(client().request({ method: 'GET', url: `${fake.url}/x` }))).message).toBe('HTTP 429 without Retry-After');
    expect(fake.count()).toBe(1);

    fake.reset();
    fake.script({ status: 429, headers: { 'retry-after': '0' } }, { status: 429, headers: { 'retry-after': '0' } });
    expect((await failure(client().request({ method: 'GET', url: `${fake.url}/x` }))).kind).toBe('rate-limited');
    expect(fake.count()).toBe(2);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = new Date('2026-01-15T12:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Thu, 15 Jan 2026 12:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Thu, 15 Jan 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs('-1', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });

  it('keeps the whole request within its budget, the retry included', async () => {
    fake.script({ hang: true }, { hang: true });
    // The pause before the retry uses 300 of the 400 ms budget: the retry may wait 100 ms, not its 300 ms timeout.
    const error = await failure(client({ timeoutMs: 300, budgetMs: 400, retryDelayMs: 300 }).request({ method: 'GET', url: `${fake.url}/x` }));
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe('no answer within 100 ms (attempt 2)');
  });

  it('gives a request only what is left of a deadline shared with the requests before it', async () => {
    const http = client({ timeoutMs: 300, budgetMs: 3000 });
    const deadline = http.deadlineIn(1000);
    // The lookup's earlier requests (a token, say) took 900 ms of its budget.
    wait.advance(900);
    fake.script({ hang: true });
    const error = await failure(http.request({ method: 'POST', url: `${fake.url}/x`, body: '{}', deadline }));
    expect(error.message).toBe('no answer within 100 ms (attempt 1)');
  });

  it('returns 4xx answers to the adapter without retrying them', async () => {
    fake.script({ status: 404, json: { error: 'nope' } });
    const response = await client().request({ method: 'GET', url: `${fake.url}/x` });
    expect(response.status).toBe(404);
    expect(fake.count()).toBe(1);
  });

  it('does not follow redirects, so key headers never reach another host', async () => {
    const other = await FakeHttpServer.start(() => ({ status: 200 }));
    try {
      fake.script({ status: 302, headers: { location: `${other.url}/steal` } });
      const response = await client().request({ method: 'GET', url: `${fake.url}/x`, headers: { 'x-api-key': 'secret-value' } });
      expect(response.status).toBe(302);
      expect(other.count()).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('refuses a body larger than the limit as a bad response', async () => {
    fake.script({ status: 200, text: 'x'.repeat(5000) });
    const error = await failure(client({ maxResponseBytes: 1000 }).request({ method: 'GET', url: `${fake.url}/x` }));
    expect(error.kind).toBe('bad-response');
    expect(fake.count()).toBe(1);
  });
});
