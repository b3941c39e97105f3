import { connect } from 'node:net';

/** One response read off a raw socket; `complete` is false when the connection ended inside it. */
export interface WireResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly complete: boolean;
}

/**
 * Splits the bytes a server sent on one connection into responses (Content-Length or chunked
 * bodies; a HEAD's response has none). A response cut off part way is returned with
 * `complete: false`; bytes that do not start a response end the list.
 */
export function parseResponses(bytes: Buffer, headRequests = 0): WireResponse[] {
  const responses: WireResponse[] = [];
  let at = 0;
  let heads = headRequests;
  while (at < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', at, 'latin1');
    if (end < 0 || !bytes.subarray(at, at + 5).toString('latin1').startsWith('HTTP/')) {
      responses.push({ statusCode: 0, headers: {}, body: bytes.subarray(at).toString('latin1'), complete: false });
      break;
    }
    const [statusLine = '', ...lines] = bytes.subarray(at, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const statusCode = Number(statusLine.split(' ')[1]);
    let bodyStart = end + 4;
    // The first responses answer the first requests; a test says how many of those were HEADs.
    const noBody = heads > 0 || statusCode === 204 || statusCode === 304;
    if (heads > 0) heads -= 1;
    if (noBody) {
      responses.push({ statusCode, headers, body: '', complete: true });
      at = bodyStart;
      continue;
    }
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const parts: Buffer[] = [];
      let complete = false;
      for (;;) {
        const lineEnd = bytes.indexOf('\r\n', bodyStart, 'latin1');
        if (lineEnd < 0) break;
        const size = parseInt(bytes.subarray(bodyStart, lineEnd).toString('latin1'), 16);
        if (!Number.isFinite(size) || lineEnd + 2 + size + 2 > bytes.length) break;
        bodyStart = lineEnd + 2 + size + 2;
        if (size === 0) {
          complete = true;
          break;
        }
        parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
      }
      responses.push({ statusCode, headers, body: Buffer.concat(parts).toString('utf8'), complete });
      at = bodyStart;
      if (!complete) break;
      continue;
    }
    const length = Number(headers['content-length'] ?? 0);
    const available = Math.min(length, bytes.length - bodyStart);
    responses.push({ statusCode, headers, body: bytes.subarray(bodyStart, bodyStart + available).toString('utf8'), complete: available === length });
    at = bodyStart + available;
    if (available < length) break;
  }
  return responses;
}

export interface ExchangeOptions {
  /** Gives up (and destroys the socket) after this long; the responses read so far are returned. */
  readonly timeoutMs?: number;
  /** Ends our side after writing (half-close), as `nc -q1` does. Default false. */
  readonly halfClose?: boolean;
  /** How many of the requests, first in order, are HEADs (their responses have no body). */
  readonly headRequests?: number;
}

/**
 * Writes `bytes` on a fresh loopback connection and reads until the server closes it (or the
 * timeout): what a client of the service would actually have received.
 */
export function exchange(port: number, bytes: string | Buffer, options: ExchangeOptions = {}): Promise<{ responses: WireResponse[]; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let settled = false;
    const finish = (closedByServer: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ responses: parseResponses(Buffer.concat(received), options.headRequests), closedByServer });
    };
    const timer = setTimeout(() => {
      finish(false);
    }, options.timeoutMs ?? 5000);
    socket.on('data', (data: Buffer) => received.push(data));
    socket.on('end', () => {
      finish(true);
    });
    socket.on('close', () => {
      finish(true);
    });
    socket.on('error', () => {
      finish(true);
    });
    socket.write(bytes, () => {
      if (options.halfClose === true) socket.end();
    });
  });
}
