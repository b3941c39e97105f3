import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Reading and writing the files of one golden wire case (layout and rules: test/wire/README.md).
 * Heads (`request.http`, `response.http`) are text with any line ending; bodies live in their own
 * files so their bytes, CRLFs included, are compared exactly.
 */

/** A request exactly as the client sends it, minus Host and Content-Length (inject sets those). */
export interface WireRequest {
  readonly method: string;
  readonly url: string;
  /** Header names lower-cased, in file order. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer | undefined;
  /** The `#` comment lines at the top of request.http: what the case proves. */
  readonly description: string;
}

/** The parts of a response a case pins down: the status line, the listed headers, the body bytes. */
export interface WireResponse {
  readonly status: number;
  readonly reason: string;
  /** Header names as written in the file (compared case-insensitively), in file order. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer;
}

/** A case folder that cannot be read; says which file and why, so a typo is quick to find. */
export class FixtureError extends Error {
  override readonly name = 'FixtureError';
}

const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/;
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/;
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/;

/** Lines of a head file: comments split off, trailing blank lines dropped, any line ending. */
function headLines(file: string, text: string): { comments: string[]; lines: string[] } {
  const all = text.split(/\r?\n/);
  const comments: string[] = [];
  while (all[0]?.startsWith('#') === true) comments.push((all.shift() ?? '').replace(/^#\s?/, ''));
  while (all.length > 0 && all.at(-1)?.trim() === '') all.pop();
  const blank = all.findIndex((l) => l.trim() === '');
  if (blank >= 0) throw new FixtureError(`${file}: line ${blank + comments.length + 1} is blank; a body goes in its own *.body.* file`);
  return { comments, lines: all };
}

function parseHeaders(file: string, lines: readonly string[], offset: number): Array<[string, string]> {
  return lines.map((line, i) => {
    const m = HEADER_LINE.exec(line);
    if (!m) throw new FixtureError(`${file}: line ${offset + i + 1} is not a "Name: value" header: ${JSON.stringify(line)}`);
    return [m[1] ?? '', m[2] ?? ''];
  });
}

/** The body file of `prefix` (`request` or `response`): `{prefix}.body` or `{prefix}.body.{ext}`. */
export function bodyFileOf(dir: string, prefix: 'request' | 'response'): string | undefined {
  const pattern = new RegExp(`^${prefix}\\.body(\\.[A-Za-z0-9]+)?$`);
  const found = readdirSync(dir).filter((f) => pattern.test(f));
  if (found.length > 1) throw new FixtureError(`${dir}: more than one ${prefix} body file (${found.join(', ')})`);
  return found[0] === undefined ? undefined : join(dir, found[0]);
}

export function readRequest(dir: string): WireRequest {
  const file = join(dir, 'request.http');
  const { comments, lines } = headLines(file, readFileSync(file, 'utf8'));
  const [requestLine, ...headerLines] = lines;
  const m = REQUEST_LINE.exec(requestLine ?? '');
  if (!m) throw new FixtureError(`${file}: the first line after the comments must be "METHOD /target HTTP/1.1", got ${JSON.stringify(requestLine)}`);
  const headers: Record<string, string> = {};
  for (const [name, value] of parseHeaders(file, headerLines, comments.length + 1)) {
    const key = name.toLowerCase();
    if (key === 'content-length') throw new FixtureError(`${file}: leave Content-Length out; inject computes it from the body file`);
    if (key in headers) throw new FixtureError(`${file}: header ${name} is given twice`);
    headers[key] = value;
  }
  const bodyFile = bodyFileOf(dir, 'request');
  return {
    method: m[1] ?? '',
    url: m[2] ?? '',
    headers,
    body: bodyFile === undefined ? undefined : readFileSync(bodyFile),
    description: comments.join(' ').trim(),
  };
}

export function readResponse(dir: string): WireResponse {
  const file = join(dir, 'response.http');
  const { comments, lines } = headLines(file, readFileSync(file, 'utf8'));
  const [statusLine, ...headerLines] = lines;
  const m = STATUS_LINE.exec(statusLine ?? '');
  if (!m) throw new FixtureError(`${file}: the first line must be "HTTP/1.1 <status> <reason>", got ${JSON.stringify(statusLine)}`);
  const bodyFile = bodyFileOf(dir, 'response');
  return {
    status: Number(m[1]),
    reason: m[2] ?? '',
    headers: parseHeaders(file, headerLines, comments.length + 1),
    body: bodyFile === undefined ? Buffer.alloc(0) : readFileSync(bodyFile),
  };
}

/** The headers a new response.http lists when it has none yet. */
export const DEFAULT_RESPONSE_HEADERS = ['Content-Type'] as const;

/**
 * Rewrites response.http and the response body file from an actual response (UPDATE_GOLDEN).
 * Keeps the header names the file already lists, so a header pinned by hand stays pinned.
 */
export function writeResponse(dir: string, actual: WireResponse, headerNames: readonly string[]): void {
  const head = [`HTTP/1.1 ${actual.status} ${actual.reason}`];
  for (const name of headerNames) {
    const value = actual.headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
    if (value !== undefined) head.push(`${name}: ${value}`);
  }
  writeFileSync(join(dir, 'response.http'), `${head.join('\n')}\n`);
  const old = bodyFileOf(dir, 'response');
  if (old !== undefined) rmSync(old);
  if (actual.body.length === 0) return;
  const contentType = actual.headers.find(([n]) => n.toLowerCase() === 'content-type')?.[1] ?? '';
  const ext = /xml/i.test(contentType) ? 'xml' : /json/i.test(contentType) ? 'json' : 'txt';
  writeFileSync(join(dir, `response.body.${ext}`), actual.body);
}

/** Header names listed by an existing response.http, or the defaults for a new case. */
export function pinnedHeaderNames(dir: string): string[] {
  if (!existsSync(join(dir, 'response.http'))) return [...DEFAULT_RESPONSE_HEADERS];
  return readResponse(dir).headers.map(([name]) => name);
}
