import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnswerDelivery } from '../../lookup/lookup-request.js';

/**
 * A lookup's answer as Node's HTTP server delivers it (issue 31; LookupRequest.delivery): open
 * while the request's connection can still be written to, and delivered once the response is
 * written whole, that is when its last byte was handed to the kernel (the response's `finish`).
 *
 * The connection is the request's socket, not the response's: a response queued behind pipelined
 * ones has no socket yet, and if the connection closes first it never gets one and never emits
 * `close` itself. A half-closed connection (the client ended its side after the request) stays
 * writable: the server answers it (`httpAllowHalfOpen`, src/app.ts).
 *
 * What this cannot see: bytes the kernel accepted that never reached the client (it reset the
 * connection after our write). That is the one window left, stated in docs/interfaces.md "Credits".
 */
/**
 * A socket's flags as they may be: Fastify's inject (light-my-request) hands requests a socket
 * without them, and its answers are always delivered.
 */
interface SocketState {
  readonly destroyed?: boolean;
  readonly writable?: boolean;
}

export class ConnectionDelivery implements AnswerDelivery {
  constructor(
    private readonly request: IncomingMessage,
    private readonly response: ServerResponse,
  ) {}

  open(): boolean {
    const socket = this.request.socket as SocketState;
    return socket.destroyed !== true && socket.writable !== false && !this.response.destroyed;
  }

  whenUndelivered(undelivered: () => void): void {
    const response = this.response;
    const socket = this.request.socket;
    if ((socket as SocketState).destroyed === true || response.destroyed) {
      undelivered();
      return;
    }
    // Delivered means the response's `finish` (its last write's callback: the kernel took the
    // bytes). Not `writableFinished`: a response ended on a socket destroyed meanwhile counts as
    // finished there (Node drops the bytes, so nothing is left to write) but never emits `finish`.
    // Both listeners are removed when either fires, so a long keep-alive connection gathers none.
    // `on` and removing both by hand, not `once`: each `once` wraps its listener in a bound
    // function and a state object, on every paid answer.
    const onClose = (): void => {
      socket.removeListener('close', onClose);
      response.removeListener('finish', onFinish);
      undelivered();
    };
    const onFinish = (): void => {
      socket.removeListener('close', onClose);
      response.removeListener('finish', onFinish);
    };
    socket.on('close', onClose);
    response.on('finish', onFinish);
  }
}
