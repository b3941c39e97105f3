import { request } from 'node:http';
import { connect } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { expect } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';

/** SOAP version of a request or a response. */
export type Version = '1.1' | '1.2';

export const VERSIONS: readonly Version[] = ['1.1', '1.2'];

/** Envelope namespaces (SOAP 1.1 section 4, SOAP 1.2 part 1 section 5). */
export const ENVELOPE_NS: Readonly<Record<Version, string>> = {
  '1.1': 'http://schemas.xmlsoap.org/soap/envelope/',
  '1.2': 'http://www.w3.org/2003/05/soap-envelope',
};

/** The default service namespaces (compat-notes "Namespaces and actions"). */
export const REG_NS = 'http://regcheck.org.uk';
export const BESPOKE_NS = 'http://Regcheck.org.uk/';

/** What each version's response must be labelled with (compat-notes "Errors": PHP and .NET need it). */
export const SOAP_CONTENT_TYPE: Readonly<Record<Version, string>> = {
  '1.1': 'text/xml; charset=utf-8',
  '1.2': 'application/soap+xml; charset=utf-8',
};

/** The account every hostile request names; it has credits, so a request that got through would debit it. */
export const USER = 'alice';
/** A CheckFrance plate in samples/sample-dataset.jsonl and what its record says. */
export const PLATE = 'FK482TR';
export const PLATE_DESCRIPTION = 'RENAULT CLIO V';

export const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';

/**
 * Things an error message shown to a remote caller must not contain: stack frames, source paths,
 * internal type or error-code names (compat-notes "Errors": "no stack trace, no type names").
 */
export const LEAK =
  /\n\s+at\s|\bat\s+[\w$.<>]+\s+\(|[\w-]+\.[cm]?[jt]s:\d+|node_modules|\/work\/|\/src\/|file:\/\/|\b[A-Z]\w*(?:Error|Exception)\b|\bFST_\w+|\bERR_[A-Z_]+|\[object /;

/** A SOAP envelope of the given version around `body`; `prolog` replaces the XML declaration. */
export function envelope(version: Version, body: string, options: { prolog?: string; beforeBody?: string } = {}): string {
  const prolog = options.prolog ?? XML_DECLARATION;
  return `${prolog}<soap:Envelope xmlns:soap="${ENVELOPE_NS[version]}">${options.beforeBody ?? ''}<soap:Body>${body}</soap:Body></soap:Envelope>`;
}

/**
 * `<CheckFrance>` in the reg namespace. `inner` goes after the parameters (hostile extras);
 * `plate` and `user` are inserted as written, so callers can use entities or CDATA.
 */
export function checkFrance(options: { plate?: string; user?: string; inner?: string; ns?: string } = {}): string {
  const plate = options.plate ?? PLATE;
  const user = options.user ?? USER;
  return `<CheckFrance xmlns="${options.ns ?? REG_NS}"><RegistrationNumber>${plate}</RegistrationNumber><username>${user}</username>${options.inner ?? ''}</CheckFrance>`;
}

/** Request headers a generated ASMX proxy sends for `action` in each version. */
export function soapHeaders(version: Version, action: string | undefined): Record<string, string> {
  if (version === '1.1') {
    return action === undefined ? { 'content-type': SOAP_CONTENT_TYPE['1.1'] } : { 'content-type': SOAP_CONTENT_TYPE['1.1'], soapaction: `"${action}"` };
  }
  return { 'content-type': action === undefined ? SOAP_CONTENT_TYPE['1.2'] : `${SOAP_CONTENT_TYPE['1.2']}; action="${action}"` };
}

export interface SoapPost {
  readonly path?: string;
  /** SOAPAction (1.1) or the action parameter (1.2); default the CheckFrance action, `null` for none. */
  readonly action?: string | null;
  /** Extra or overriding headers. */
  readonly headers?: Record<string, string>;
}

/** POSTs a SOAP request through `inject`. */
export async function postSoap(app: TestApp, version: Version, payload: string | Buffer, options: SoapPost = {}): Promise<LightMyRequestResponse> {
  const action = options.action === undefined ? `${REG_NS}/CheckFrance` : options.action ?? undefined;
  return app.app.inject({
    method: 'POST',
    url: options.path ?? '/api/reg.asmx',
    headers: { ...soapHeaders(version, action), ...options.headers },
    payload,
  });
}

interface Node {
  readonly uri: string;
  readonly local: string;
  readonly attributes: ReadonlyArray<{ readonly uri: string; readonly local: string; readonly value: string }>;
  readonly children: Node[];
  text: string;
}

/** Namespace-aware parse of a response, independent of the reader under test. */
function parseResponse(xml: string): Node {
  const parser = new SaxesParser({ xmlns: true });
  const stack: Node[] = [];
  let root: Node | undefined;
  parser.on('opentag', (tag: SaxesTagNS) => {
    const node: Node = {
      uri: tag.uri,
      local: tag.local,
      attributes: Object.values(tag.attributes).map((a) => ({ uri: a.uri, local: a.local, value: a.value })),
      children: [],
      text: '',
    };
    const parent = stack.at(-1);
    if (parent) parent.children.push(node);
    else root = node;
    stack.push(node);
  });
  parser.on('closetag', () => stack.pop());
  parser.on('text', (text) => {
    const current = stack.at(-1);
    if (current) current.text += text;
  });
  parser.on('error', (error) => {
    throw error;
  });
  parser.write(xml).close();
  if (!root) throw new Error('the response has no root element');
  return root;
}

function only(node: Node, uri: string, local: string): Node {
  const names = node.children.map((c) => `{${c.uri}}${c.local}`);
  expect(names, `children of ${node.local}`).toEqual([`{${uri}}${local}`]);
  return node.children[0] as Node;
}

/** The fault's code and message, after checking it has exactly the shape compat-notes "Errors" gives for `version`. */
export function readFault(version: Version, xml: string): { code: string; message: string } {
  const ns = ENVELOPE_NS[version];
  const root = parseResponse(xml);
  expect(`{${root.uri}}${root.local}`).toBe(`{${ns}}Envelope`);
  const fault = only(only(root, ns, 'Body'), ns, 'Fault');
  if (version === '1.1') {
    // The children are unqualified in ASMX's 1.1 faults.
    expect(fault.children.map((c) => `{${c.uri}}${c.local}`)).toEqual(['{}faultcode', '{}faultstring', '{}detail']);
    const [code, message] = fault.children;
    return { code: code?.text ?? '', message: message?.text ?? '' };
  }
  expect(fault.children.map((c) => `{${c.uri}}${c.local}`)).toEqual([`{${ns}}Code`, `{${ns}}Reason`, `{${ns}}Detail`]);
  const [code, reason] = fault.children as [Node, Node, Node];
  const text = only(reason, ns, 'Text');
  expect(text.attributes).toContainEqual({ uri: 'http://www.w3.org/XML/1998/namespace', local: 'lang', value: 'en' });
  return { code: only(code, ns, 'Value').text, message: text.text };
}

/** The Client (1.1) / Sender (1.2) fault code. */
export const CLIENT_CODE: Readonly<Record<Version, string>> = { '1.1': 'soap:Client', '1.2': 'soap:Sender' };

/**
 * Asserts a refused request got a Client/Sender fault with `status`, the version's SOAP content
 * type, a message naming the problem and nothing internal; returns the message.
 */
export function expectClientFault(res: LightMyRequestResponse, version: Version, status: number, problem: RegExp): string {
  expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status, type: SOAP_CONTENT_TYPE[version] });
  expect(res.body).not.toMatch(LEAK);
  const fault = readFault(version, res.body);
  expect(fault.code).toBe(CLIENT_CODE[version]);
  expect(fault.message).toMatch(problem);
  return fault.message;
}

/** Asserts a CheckFrance lookup of PLATE answered normally in `version`. */
export function expectCheckFranceResult(res: LightMyRequestResponse, version: Version): void {
  expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status: 200, type: SOAP_CONTENT_TYPE[version] });
  const root = parseResponse(res.body);
  const body = only(root, ENVELOPE_NS[version], 'Body');
  const response = only(body, REG_NS, 'CheckFranceResponse');
  const result = only(response, REG_NS, 'CheckFranceResult');
  const vehicleJson = result.children.find((c) => c.local === 'vehicleJson');
  expect(vehicleJson?.text).toContain(PLATE_DESCRIPTION);
}

/** Asserts an ASMX GET/POST error: plain text, the status, a message naming the problem, nothing internal. */
export function expectPlainTextError(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, problem: RegExp): void {
  expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status, type: 'text/plain; charset=utf-8' });
  expect(res.body).toMatch(problem);
  expect(res.body).not.toMatch(LEAK);
}

/** Runs `action` and returns it with the credits it took from USER. */
export async function creditsSpent<T>(app: TestApp, action: () => Promise<T>): Promise<{ result: T; spent: number }> {
  const before = await app.services.accounts.balance(USER);
  const result = await action();
  const after = await app.services.accounts.balance(USER);
  return { result, spent: before - after };
}

/** Runs `action` and asserts USER's balance did not move. */
export async function withoutDebit<T>(app: TestApp, action: () => Promise<T>): Promise<T> {
  const { result, spent } = await creditsSpent(app, action);
  expect(spent, 'credits debited by a refused request').toBe(0);
  return result;
}

/** Own properties of the built-in prototypes a polluting key would change. */
export function prototypeSnapshot(): Record<string, string[]> {
  const names = (o: object): string[] => Reflect.ownKeys(o).map(String).sort();
  return {
    object: names(Object.prototype),
    array: names(Array.prototype),
    function: names(Function.prototype),
    string: names(String.prototype),
  };
}

/** Asserts no request managed to write through `__proto__` / `constructor.prototype`. */
export function expectPrototypesUnpolluted(snapshot: Record<string, string[]>): void {
  expect(prototypeSnapshot()).toEqual(snapshot);
  const probe: Record<string, unknown> = {};
  expect(probe.polluted).toBeUndefined();
  expect(probe.yes).toBeUndefined();
  expect(Object.getPrototypeOf(probe)).toBe(Object.prototype);
  expect(Object.prototype.constructor).toBe(Object);
  expect(typeof Object.prototype.hasOwnProperty).toBe('function');
  expect(typeof Object.prototype.toString).toBe('function');
}

/** A response read from a raw socket. */
export interface RawResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

function parseRaw(raw: string): RawResponse {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { statusCode: Number(statusLine.split(' ')[1]), headers, body: split < 0 ? '' : raw.slice(split + 4) };
}

/**
 * Writes `head` and then `chunks` one by one (with `delayMs` between them) on a raw socket and
 * resolves with the first complete response. `end: false` keeps the upload open, as a slow or
 * stalled client would; the socket is destroyed once the answer is read or after `timeoutMs`.
 */
export function rawExchange(
  port: number,
  head: string,
  chunks: ReadonlyArray<string | Buffer>,
  options: { delayMs?: number; end?: boolean; timeoutMs?: number } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error && received === '') reject(error);
      else resolve(parseRaw(received));
    };
    const timer = setTimeout(() => {
      finish(new Error(`no response within ${options.timeoutMs ?? 5000} ms`));
    }, options.timeoutMs ?? 5000);
    socket.on('data', (data: Buffer) => {
      received += data.toString('utf8');
      const parsed = parseRaw(received);
      const length = Number(parsed.headers['content-length'] ?? NaN);
      if (Number.isFinite(length) && Buffer.byteLength(parsed.body) >= length) finish();
    });
    socket.on('close', () => {
      finish(new Error('connection closed without a response'));
    });
    // The server may answer and close while we are still uploading; that is the point of the test.
    socket.on('error', (error) => {
      finish(error);
    });
    socket.write(head);
    let next = 0;
    const writeNext = (): void => {
      if (settled) return;
      const chunk = chunks[next];
      next += 1;
      if (chunk === undefined) {
        if (options.end !== false) socket.end();
        return;
      }
      socket.write(chunk);
      setTimeout(writeNext, options.delayMs ?? 0);
    };
    writeNext();
  });
}

/** A plain GET over a fresh connection (no keep-alive reuse of a socket the server closed). */
export function httpGet(port: number, path: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers[name] = value;
        resolve({ statusCode: res.statusCode ?? 0, headers, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Sends `head` and part of a body on a raw socket, then resets the connection: a client that
 * gives up half way through an upload. Resolves once the socket is gone.
 */
export function abortedUpload(port: number, head: string, partial: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head + partial, () => {
        setTimeout(() => socket.resetAndDestroy(), 50);
      });
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      resolve();
    });
  });
}

/** A complete HTTP/1.1 request with a Content-Length, ready for rawExchange. */
export function rawRequest(method: string, path: string, headers: Record<string, string>, body: string | Buffer): { head: string; body: Buffer } {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const lines = Object.entries({ host: '127.0.0.1', connection: 'close', ...headers, 'content-length': String(bytes.length) }).map(([k, v]) => `${k}: ${v}`);
  return { head: `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`, body: bytes };
}
