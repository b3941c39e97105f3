import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import { LookupError } from '../../lookup/lookup-error.js';
import type { LookupPipeline } from '../../lookup/lookup-pipeline.js';
import type { RawArguments } from '../../lookup/lookup-query.js';
import { memoizedEncoding } from '../../lookup/result-memo.js';
import { jsonBodyOf } from '../../results/index.js';
import { baseUrlOf } from '../../web/base-url.js';
import { parseBasicAuth } from '../../web/basic-auth.js';
import { bindJsonSegments, splitJsonPath } from './json-path.js';

export interface JsonPluginOptions {
  readonly pipeline: LookupPipeline;
  readonly realm: string;
  readonly baseUrl: string | undefined;
}

const PREFIX = '/api/json.aspx/';

/**
 * Binds path segments once the operation is known. Built here rather than inline in the request
 * object: the runtime (tsx, keepNames) would name an inline arrow with Object.defineProperty on
 * every request.
 */
function jsonBinder(segments: readonly string[]): (op: OperationDeclaration) => RawArguments {
  return (op) => bindJsonSegments(op, segments);
}

/**
 * The JSON interface: `GET /api/json.aspx/{Method}/{...}` with HTTP Basic (interface spec "JSON
 * interface", "Authentication", "Errors"). 401 for credentials, 500 plain text for every API error.
 */
export const jsonPlugin: FastifyPluginAsync<JsonPluginOptions> = (app, options) => {
  const sendError = (reply: FastifyReply, status: number, message: string): FastifyReply =>
    reply.code(status).type('text/plain; charset=utf-8').send(message);

  app.options(`${PREFIX}*`, (_request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, OPTIONS')
      .header('access-control-allow-headers', 'Authorization, Content-Type')
      .header('access-control-max-age', '86400')
      .send(),
  );

  app.get(`${PREFIX}*`, async (request, reply) => {
    try {
      const { method, segments } = splitJsonPath(request.raw.url ?? '', PREFIX);
      const outcome = await options.pipeline.execute({
        operationName: method,
        bind: jsonBinder(segments),
        auth: { mode: 'api-key', basic: parseBasicAuth(request.headers.authorization) },
        interface: 'json',
        requestId: request.id,
        baseUrl: baseUrlOf(request, options.baseUrl),
      });
      return await reply
        .code(200)
        .type('application/json; charset=utf-8')
        .header('x-credits-charged', String(outcome.charged))
        .header('x-credits-remaining', String(outcome.balance))
        .send(memoizedEncoding(outcome.result, 'json', () => JSON.stringify(jsonBodyOf(outcome.result))));
    } catch (error) {
      if (!(error instanceof LookupError)) {
        request.log.error({ err: error }, 'lookup failed unexpectedly');
        return sendError(reply, 500, `Internal error; quote request id ${request.id} to the operator`);
      }
      if (error.code === 'UNAUTHORIZED') {
        reply.header('www-authenticate', `Basic realm="${options.realm}", charset="UTF-8"`);
        return sendError(reply, 401, error.message);
      }
      // An extension of the spec (which knows only 401 and 500): the original had no rate limits,
      // and 429 + Retry-After is what HTTP clients and proxies understand (RFC 6585 section 4).
      if (error.code === 'RATE_LIMITED') {
        reply.header('retry-after', String(error.retryAfterSeconds ?? 1));
        return sendError(reply, 429, error.message);
      }
      return sendError(reply, 500, error.message);
    }
  });
  return Promise.resolve();
};
