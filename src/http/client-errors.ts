import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A request read on a connection and the response that answers it. */
interface Exchange {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
}

/**
 * What happens to a connection when Node's HTTP parser rejects what the client sent (malformed
 * bytes, an invalid Transfer-Encoding, a broken chunk) or a request timeout fires.
 *
 * Node hands those to the server's `clientError` listener and, by default, writes a raw 400 and
 * destroys the socket. That is right for a connection with nothing in flight, and wrong for one
 * on which a request was already read: a valid lookup followed on the same connection by
 * rejected bytes was debited, then the raw 400 went out in place of the paid answer, which was
 * lost with the socket (issue 17 item 2). Here the answers owed finish first; then the error is
 * answered and the connection closed. Nothing after the rejected bytes is read as a request.
 *
 * Owed are the requests read whole (the parser error comes in the same chunk, before Fastify has
 * even parsed their bodies) and those whose handler has started (a GET runs without waiting for
 * a body that then turns out broken). A request still waiting for its body is not owed: the
 * timeout or the broken body is its own, and the error answers it. That includes a request whose
 * started handler reads the body as a stream (an import upload, src/http/api/import.routes.ts): its
 * answer waits for that body, so waiting for its answer would hold the connection until the
 * socket timeout (a client that hung up mid-upload: HPE_INVALID_EOF_STATE).
 *
 * A client that goes away before its answer is written still loses it: that is what idempotent
 * retries (issue 17 item 3) cover, not this.
 */
export class ClientErrors {
  private readonly exchanges = new WeakMap<Socket, Exchange[]>();
  private readonly started = new WeakSet<ServerResponse>();
  private readonly closing = new WeakSet<Socket>();

  /** The server's `request` listener: every request, as the parser emits it. */
  readonly received = (request: IncomingMessage, response: ServerResponse): void => {
    const socket = request.socket;
    const exchanges = this.exchanges.get(socket);
    if (exchanges === undefined) {
      this.exchanges.set(socket, [{ request, response }]);
      return;
    }
    // Finished exchanges are dropped as new ones arrive, so a long keep-alive connection keeps
    // only the requests pipelined behind the one being answered.
    if (exchanges.every((e) => e.response.writableFinished || e.response.destroyed)) exchanges.length = 0;
    exchanges.push({ request, response });
  };

  /** Records that a request's handler is about to run (Fastify's preHandler, before any lookup). */
  dispatched(response: ServerResponse): void {
    this.started.add(response);
  }

  /** The server's `clientError` listener (Fastify's `clientErrorHandler`). */
  readonly handle = (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // The parser stays in error: every later chunk from the client reports the error again.
    if (this.closing.has(socket)) return;
    this.closing.add(socket);
    const answer = (): void => {
      if (socket.destroyed || !socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(rawErrorResponse(error.code));
    };
    const inFlight = (this.exchanges.get(socket) ?? [])
      .filter((e) => !e.response.writableFinished && !e.response.destroyed && (e.request.complete || (this.started.has(e.response) && !readingBody(e.request))))
      .map((e) => e.response);
    if (inFlight.length === 0) {
      answer();
      return;
    }
    // 'close' follows 'finish', or the socket's end when the client went away first.
    let left = inFlight.length;
    for (const response of inFlight) {
      response.once('close', () => {
        left -= 1;
        if (left === 0) answer();
      });
    }
  };
}

/** A handler is consuming the request's body as it arrives (someone listens for its data). */
function readingBody(request: IncomingMessage): boolean {
  return !request.complete && request.listenerCount('data') > 0;
}

/** A complete plain-text answer for an error found before or between requests. */
function rawErrorResponse(code: string | undefined): string {
  const [status, reason] =
    code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large'] : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'Request Timeout'] : [400, 'Bad Request'];
  const body = `${reason}\r\n`;
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
