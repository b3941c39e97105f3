import type { FastifyReply } from 'fastify';

/**
 * Answers a lookup from a synchronous route handler (one that returns nothing: Fastify then waits
 * for `reply.send`, its documented callback style) once the lookup settles, instead of an async
 * handler that awaits it and then `return await reply...send()`.
 *
 * The async form cost every answer five promises beside the lookup's own: the handler's, its
 * await of the lookup, Fastify's `then` on the returned promise (wrap-thenable.js), and two for
 * awaiting the reply, which is a thenable (`Reply.prototype.then`). Here there is one: the
 * lookup's `then`. The cost guard (test/cost/) counts them.
 *
 * `start` runs now; whatever it throws, and whatever `answer` throws, goes to `fail` as the
 * handler's catch block took it before. Should `fail` itself throw, the error goes to
 * `reply.send`, that is to the scope's error handler, as Fastify does with an async handler's
 * rejection.
 */
export function replyWhenSettled<T>(reply: FastifyReply, start: () => Promise<T>, answer: (value: T) => void, fail: (error: unknown) => void): void {
  const failed = (error: unknown): void => {
    try {
      fail(error);
    } catch (thrown) {
      void reply.send(thrown instanceof Error ? thrown : new Error(String(thrown)));
    }
  };
  let pending: Promise<T>;
  try {
    pending = start();
  } catch (error) {
    failed(error);
    return;
  }
  void pending.then((value) => {
    try {
      answer(value);
    } catch (error) {
      failed(error);
    }
  }, failed);
}
