import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Responses whose handler has started, per connection: answers that may already be paid for. */
type Owed = ServerResponse[];

/**
 * What happens to a connection when Node's HTTP parser rejects what the client sent (malformed
 * bytes, an invalid Transfer-Encoding, a broken chunk) or a request timeout fires.
 *
 * Node hands those to the server's `clientError` listener and, by default, writes a raw 400 and
 * destroys the socket. That is right for a connection with nothing in flight, and wrong for one
 * on which a request was already dispatched: a valid lookup followed on the same connection by
 * rejected bytes was debited, then the raw 400 went out in place of the paid answer, which was
 * lost with the socket (issue 17 item 2). Here the answers in flight finish first; then the error
 * is answered and the connection closed. Nothing after the rejected bytes is read as a request.
 *
 * A client that goes away before its answer is written still loses it: that is what idempotent
 * retries (issue 17 item 3) cover, not this.
 */
export class ClientErrors {
  private readonly owed = new WeakMap<Socket, Owed>();
  private readonly closing = new WeakSet<Socket>();

  /**
   * Records that a request's handler is about to run (Fastify's preHandler: after its body was
   * read, before any lookup). Requests still waiting for their body are not owed an answer: a
   * timeout or a broken body is theirs, and the error answers them.
   */
  dispatched(socket: Socket, response: ServerResponse): void {
    let owed = this.owed.get(socket);
    if (owed === undefined) {
      this.owed.set(socket, [response]);
      return;
    }
    // Finished answers are dropped here, so a long keep-alive connection keeps at most the
    // answers of its pipelined requests.
    if (owed.length > 0 && owed.every((r) => r.writableFinished || r.destroyed)) owed = [];
    owed.push(response);
    this.owed.set(socket, owed);
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
    const inFlight = (this.owed.get(socket) ?? []).filter((r) => !r.writableFinished && !r.destroyed);
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

/** A complete plain-text answer for an error found before or between requests. */
function rawErrorResponse(code: string | undefined): string {
  const [status, reason] =
    code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large'] : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'Request Timeout'] : [400, 'Bad Request'];
  const body = `${reason}\r\n`;
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
