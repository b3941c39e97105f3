import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { logStream } from '../../src/ops/log-stream.js';

/** A stream that keeps what is written to it. */
function collector(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

describe('LOG_FORMAT (issue 34)', () => {
  it('JSON lines by default and whenever stdout is not a terminal; readable lines on a terminal or when asked', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(logStream('auto', false)).toBeUndefined();
    expect(logStream('json', true)).toBeUndefined();
    expect(logStream('auto', true)).toBeDefined();
    expect(logStream('pretty', false)).toBeDefined();
  });

  it('refuses a value it does not know, naming the ones it does', () => {
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).toThrow(/LOG_FORMAT/);
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).toThrow(/auto, json, pretty|auto.*json.*pretty/);
  });

  it('pretty prints one line an event: time, level, message and the fields, no colour off a terminal', () => {
    const out = collector();
    const stream = logStream('pretty', false, out.stream);
    if (!stream) throw new Error('no pretty stream');
    const log = pino({ level: 'info' }, stream);
    log.info({ reqId: 'r-1', res: { statusCode: 200 } }, 'request completed');
    log.warn('shutting down');
    const lines = out.text().trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\] INFO: request completed \{"reqId":"r-1","res":\{"statusCode":200\}\}$/);
    expect(lines[1]).toMatch(/\] WARN: shutting down$/);
    expect(out.text()).not.toContain('\u001b[');
    expect(out.text()).not.toMatch(/"pid"|"hostname"/);
  });
});
