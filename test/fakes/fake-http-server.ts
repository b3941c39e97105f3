import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A request as the fake saw it. */
export interface FakeRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly path: string;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What the fake answers. */
export type FakeResponse =
  | {
      readonly status: number;
      readonly json?: unknown;
      readonly text?: string;
      readonly headers?: Readonly<Record<string, string>>;
      /** Wait before answering at all. */
      readonly delayMs?: number;
      /** Send the status and headers at once, the body after this long. */
      readonly bodyDelayMs?: number;
    }
  /** Accepts the request and never answers (until the fake closes). */
  | { readonly hang: true }
  /** Closes the connection without an answer. */
  | { readonly reset: true }
  /** Holds the request and answers as the promise says once it settles: a test decides when. */
  | { readonly until: Promise<FakeResponse> };

export type FakeHandler = (request: FakeRequest) => FakeResponse;

/** Longest body the fake reads; tests never need more. */
const MAX_BODY = 64 * 1024;
/** Longest delay a scripted answer may ask for, so no test can wait for ever. */
const MAX_DELAY_MS = 30_000;

/**
 * A local HTTP server for upstream fakes: 127.0.0.1 only, a random port, every request recorded.
 * `script()` makes the next requests answer as given (slow, hanging, 5xx...) before the handler
 * takes over again. `close()` ends hanging requests too.
 */
export class FakeHttpServer {
  readonly requests: FakeRequest[] = [];
  private readonly scripted: FakeResponse[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private port = 0;

  private constructor(
    private readonly server: Server,
    private readonly handler: FakeHandler,
  ) {
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res);
    });
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(handler: FakeHandler): Promise<FakeHttpServer> {
    const server = createServer();
    const fake = new FakeHttpServer(server, handler);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('fake server has no port');
    fake.port = address.port;
    return fake;
  }

  /** `http://127.0.0.1:{port}`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The next requests get these answers, in order, whatever they ask. */
  script(...responses: FakeResponse[]): void {
    this.scripted.push(...responses);
  }

  /** Requests whose path starts with `prefix`. */
  count(prefix = '/'): number {
    return this.requests.filter((r) => r.path.startsWith(prefix)).length;
  }

  reset(): void {
    this.requests.length = 0;
    this.scripted.length = 0;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.sockets) s.destroy();
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const url = req.url ?? '/';
      const request: FakeRequest = { method: req.method ?? 'GET', url, path: url.split('?', 1)[0] ?? '/', headers, body: Buffer.concat(chunks).toString('utf8') };
      this.requests.push(request);
      const response = this.scripted.shift() ?? this.handler(request);
      this.respond(res, response);
    });
  }

  private respond(res: ServerResponse, response: FakeResponse): void {
    if ('hang' in response) return;
    if ('until' in response) {
      void response.until.then((answer) => {
        if (!res.destroyed) this.respond(res, answer);
      });
      return;
    }
    if ('reset' in response) {
      res.socket?.destroy();
      return;
    }
    const send = (): void => {
      const body = response.json !== undefined ? JSON.stringify(response.json) : response.text ?? '';
      const type = response.json !== undefined ? { 'content-type': 'application/json' } : {};
      res.writeHead(response.status, { ...type, 'content-length': String(Buffer.byteLength(body)), ...response.headers });
      const bodyDelay = Math.min(response.bodyDelayMs ?? 0, MAX_DELAY_MS);
      if (bodyDelay <= 0) {
        res.end(body);
        return;
      }
      res.flushHeaders();
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!res.destroyed) res.end(body);
      }, bodyDelay);
      this.timers.add(timer);
    };
    const delay = Math.min(response.delayMs ?? 0, MAX_DELAY_MS);
    if (delay <= 0) {
      send();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!res.destroyed) send();
    }, delay);
    this.timers.add(timer);
  }
}
