import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import { LookupError } from '../../lookup/lookup-error.js';
import type { LookupPipeline } from '../../lookup/lookup-pipeline.js';
import type { RawArguments } from '../../lookup/lookup-query.js';
import type { LookupResult } from '../../lookup/lookup-result.js';
import { memoizedEncoding } from '../../lookup/result-memo.js';
import { baseUrlOf } from '../../web/base-url.js';
import { parseBasicAuth } from '../../web/basic-auth.js';
import { originForm } from '../../web/request-target.js';
import { bindJsonSegments, splitJsonPath } from './json-path.js';

export interface JsonPluginOptions {
  readonly pipeline: LookupPipeline;
  readonly realm: string;
  readonly baseUrl: string | undefined;
}

const PREFIX = '/api/json.aspx/';

/** The body of a successful answer: the vehicleJson document, the MOT object or the ratings list. */
function body(result: LookupResult): unknown {
  switch (result.type) {
    case 'Vehicle':
      return result.vehicle;
    case 'UKMOTData':
      return { ...result.mot, Tests: result.mot.Tests, ExtendedInformation: result.mot.ExtendedInformation ?? {} };
    case 'ArrayOfPreAssessmentSearchResult':
      return result.ratings;
  }
}

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

  // A lookup costs a credit, and an honest HEAD would have to run it to know the GET's status and
  // headers (RFC 9110 section 9.3.2), then throw the paid answer away. So HEAD is refused here
  // (405 lists what the resource takes, RFC 9110 section 15.5.6); pages that cost nothing keep it.
  app.head(`${PREFIX}*`, (_request, reply) => reply.code(405).header('allow', 'GET, OPTIONS').type('text/plain; charset=utf-8').send('HEAD is not allowed: a lookup is charged; use GET'));

  app.get(`${PREFIX}*`, { exposeHeadRoute: false }, async (request, reply) => {
    // Before the lookup: an invalid Host is a 400 from the app's error handler (base-url.ts).
    const baseUrl = baseUrlOf(request, options.baseUrl);
    try {
      const { method, segments } = splitJsonPath(originForm(request.raw.url ?? ''), PREFIX);
      const outcome = await options.pipeline.execute({
        operationName: method,
        bind: jsonBinder(segments),
        auth: { mode: 'api-key', basic: parseBasicAuth(request.headers.authorization) },
        interface: 'json',
        requestId: request.id,
        baseUrl,
      });
      return await reply
        .code(200)
        .type('application/json; charset=utf-8')
        .header('x-credits-charged', String(outcome.charged))
        .header('x-credits-remaining', String(outcome.balance))
        .send(memoizedEncoding(outcome.result, 'json', () => JSON.stringify(body(outcome.result))));
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
