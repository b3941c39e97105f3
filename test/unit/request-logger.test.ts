import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { RequestLogger, requestLoggerFactory } from '../../src/http/request-logger.js';

/** A pino logger as the service configures it, writing JSON lines into an array. */
function capture(level: string): { logger: pino.Logger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ level, redact: { paths: ['req.headers.authorization'], censor: '[redacted]' } }, stream);
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** The factory's answer as a RequestLogger; fails the test when it is not one. */
function lazy(log: unknown): RequestLogger {
  if (!(log instanceof RequestLogger)) throw new Error('the factory did not return a RequestLogger');
  return log;
}

describe('RequestLogger (request.log)', () => {
  it('makes no pino child while nothing is written at an enabled level', () => {
    const { logger, lines } = capture('warn');
    const child = vi.spyOn(logger, 'child');
    const log = requestLoggerFactory(logger, { reqId: 'r-1' }, {});
    expect(log).toBeInstanceOf(RequestLogger);
    log.info({ req: { url: '/x' } }, 'incoming request');
    log.debug('detail');
    log.trace('more');
    expect(child).not.toHaveBeenCalled();
    expect(lines()).toEqual([]);
    expect(log.level).toBe('warn');
    expect(lazy(log).isLevelEnabled('info')).toBe(false);
    expect(lazy(log).isLevelEnabled('warn')).toBe(true);
  });

  it('writes the lines of enabled levels through one child carrying the request id, redaction included', () => {
    const { logger, lines } = capture('info');
    const child = vi.spyOn(logger, 'child');
    const log = requestLoggerFactory(logger, { reqId: 'r-2' }, {});
    log.info({ req: { headers: { authorization: 'Basic c2VjcmV0' } } }, 'incoming request');
    log.warn('careful %s', 'now');
    log.error(new Error('boom'), 'failed');
    log.debug('not at info');
    expect(child).toHaveBeenCalledTimes(1);
    const written = lines();
    expect(written.map((l) => [l.level, l.msg, l.reqId])).toEqual([
      [30, 'incoming request', 'r-2'],
      [40, 'careful now', 'r-2'],
      [50, 'failed', 'r-2'],
    ]);
    expect(written[0]?.req).toEqual({ headers: { authorization: '[redacted]' } });
    expect((written[2]?.err as { message?: string } | undefined)?.message).toBe('boom');
  });

  it('gives a request its own level once set, leaving the service logger alone', () => {
    const { logger, lines } = capture('warn');
    const log = requestLoggerFactory(logger, { reqId: 'r-3' }, {});
    log.level = 'debug';
    expect(lazy(log).isLevelEnabled('debug')).toBe(true);
    log.debug('now written');
    expect(log.level).toBe('debug');
    expect(logger.level).toBe('warn');
    expect(lines().map((l) => [l.msg, l.reqId])).toEqual([['now written', 'r-3']]);
  });

  it('hands out children that keep the request id', () => {
    const { logger, lines } = capture('info');
    const log = requestLoggerFactory(logger, { reqId: 'r-4' }, {});
    log.child({ provider: 'dvla' }).info('called');
    expect(lines().map((l) => [l.msg, l.reqId, l.provider])).toEqual([['called', 'r-4', 'dvla']]);
  });

  it('follows the service level as it changes until the request has its own child', () => {
    const { logger, lines } = capture('warn');
    const log = requestLoggerFactory(logger, { reqId: 'r-5' }, {});
    log.info('dropped');
    logger.level = 'info';
    log.info('kept');
    expect(lines().map((l) => l.msg)).toEqual(['kept']);
  });

  it('uses the logger\'s own child when the route sets a level or serializers', () => {
    const { logger, lines } = capture('warn');
    const log = requestLoggerFactory(logger, { reqId: 'r-6' }, { level: 'debug' });
    expect(log).not.toBeInstanceOf(RequestLogger);
    log.debug('route level');
    expect(lines().map((l) => [l.msg, l.reqId])).toEqual([['route level', 'r-6']]);
  });
});
