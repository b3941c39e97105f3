import { describe, expect, it } from 'vitest';
import { describeError, isStoreUnavailable, StoreUnavailable, withConnectRetry } from '../../src/storage/store-unavailable.js';

const coded = (code: string, message = 'x', extra: Record<string, unknown> = {}): Error => Object.assign(new Error(message), { code, ...extra });

describe('isStoreUnavailable (issue 31)', () => {
  it('recognises a lost or refused connection, whatever node-postgres or Node says', () => {
    for (const error of [
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('timeout exceeded when trying to connect'),
      coded('57P01', 'terminating connection due to administrator command'),
      coded('57P03', 'the database system is starting up'),
      coded('08006'),
      coded('53300', 'sorry, too many clients already'),
      coded('ECONNREFUSED'),
      coded('ECONNRESET'),
      coded('ENOENT', 'connect ENOENT /tmp/.s.PGSQL.5432', { syscall: 'connect' }),
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]),
      new StoreUnavailable('away'),
    ]) {
      expect(isStoreUnavailable(error), error.message).toBe(true);
    }
  });

  it('leaves a statement\'s own failure alone (it is not a reason to answer "temporarily unavailable")', () => {
    for (const error of [coded('23505', 'duplicate key'), coded('40001', 'could not serialize'), coded('28P01', 'password authentication failed'), coded('3D000', 'database "x" does not exist'), coded('ENOENT', 'no such file', { syscall: 'open' }), coded('SQLITE_BUSY'), new Error('boom'), 'text', undefined]) {
      expect(isStoreUnavailable(error), String(error)).toBe(false);
    }
  });
});

describe('withConnectRetry', () => {
  it('retries while the store is unreachable, with a growing pause, then succeeds', async () => {
    const messages: string[] = [];
    let calls = 0;
    const value = await withConnectRetry('postgres://db/x', { waitMs: 10_000, firstDelayMs: 1, maxDelayMs: 4, onRetry: (m) => messages.push(m) }, () => {
      calls += 1;
      return calls < 4 ? Promise.reject(coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')) : Promise.resolve('open');
    });
    expect(value).toBe('open');
    expect(calls).toBe(4);
    expect(messages).toEqual([
      'the database at postgres://db/x is not reachable (connect ECONNREFUSED 127.0.0.1:5432); retrying in 0.00 s',
      'the database at postgres://db/x is not reachable (connect ECONNREFUSED 127.0.0.1:5432); retrying in 0.00 s',
      'the database at postgres://db/x is not reachable (connect ECONNREFUSED 127.0.0.1:5432); retrying in 0.00 s',
    ]);
  });

  it('gives up after the wait with one line naming the database, the attempts and the cause', async () => {
    let calls = 0;
    const failure = withConnectRetry('postgres://db/x', { waitMs: 0 }, () => {
      calls += 1;
      return Promise.reject(coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'));
    });
    await expect(failure).rejects.toThrow(/^cannot reach the database at postgres:\/\/db\/x \(1 attempt over [\d.]+ s; DB_START_WAIT_SECONDS\): connect ECONNREFUSED 127\.0\.0\.1:5432$/);
    expect(calls).toBe(1);
  });

  it('does not retry a failure that waiting cannot cure (a wrong password)', async () => {
    let calls = 0;
    const failure = withConnectRetry('postgres://db/x', { waitMs: 60_000, firstDelayMs: 1 }, () => {
      calls += 1;
      return Promise.reject(coded('28P01', 'password authentication failed for user "app"'));
    });
    await expect(failure).rejects.toThrow('password authentication failed for user "app"');
    expect(calls).toBe(1);
  });

  it('describes an AggregateError by its first cause, in one line', () => {
    expect(describeError(new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('second')]))).toBe('connect ECONNREFUSED ::1:5432');
    expect(describeError(new Error('two\n  lines'))).toBe('two lines');
  });
});
