import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import { LookupError, type LookupErrorCode } from '../../lookup/lookup-error.js';
import type { LookupPipeline } from '../../lookup/lookup-pipeline.js';
import type { RawArguments } from '../../lookup/lookup-query.js';
import type { LookupResult } from '../../lookup/lookup-result.js';
import { memoizedEncoding } from '../../lookup/result-memo.js';
import { internalError } from '../../shared/internal-error.js';
import { baseUrlOf } from '../../web/base-url.js';
import { parseBasicAuth } from '../../web/basic-auth.js';
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

/** How the JSON interface answers a LookupError: a status and the headers that go with it. */
interface JsonWireError {
  readonly status: 401 | 429 | 500;
  /** Sends `WWW-Authenticate: Basic` so browsers and HTTP clients offer credentials. */
  readonly challenge?: true;
  /** Sends `Retry-After` with the error's wait in seconds. */
  readonly retryAfter?: true;
}

/**
 * Every LookupError code's answer (interface spec "JSON interface", "Errors": 401 for credentials,
 * 500 plain text for every other API error). A Record, so a new code does not compile until it
 * has one here.
 */
const JSON_ERRORS: Readonly<Record<LookupErrorCode, JsonWireError>> = {
  UNAUTHORIZED: { status: 401, challenge: true },
  ACCOUNT_DISABLED: { status: 500 },
  UNKNOWN_OPERATION: { status: 500 },
  INVALID_INPUT: { status: 500 },
  NOT_FOUND: { status: 500 },
  INSUFFICIENT_CREDITS: { status: 500 },
  UPSTREAM_UNAVAILABLE: { status: 500 },
  // An extension of the spec (which knows only 401 and 500): the original had no rate limits,
  // and 429 + Retry-After is what HTTP clients and proxies understand (RFC 6585 section 4).
  RATE_LIMITED: { status: 429, retryAfter: true },
  INTERNAL: { status: 500 },
};

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
        .send(memoizedEncoding(outcome.result, 'json', () => JSON.stringify(body(outcome.result))));
    } catch (error) {
      if (!(error instanceof LookupError)) return sendError(reply, 500, internalError(request, error, 'lookup failed unexpectedly'));
      const wire = JSON_ERRORS[error.code];
      if (wire.challenge) reply.header('www-authenticate', `Basic realm="${options.realm}", charset="UTF-8"`);
      if (wire.retryAfter) reply.header('retry-after', String(error.retryAfterSeconds ?? 1));
      return sendError(reply, wire.status, error.message);
    }
  });
  return Promise.resolve();
};
