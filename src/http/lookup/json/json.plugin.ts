import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { setOutcomeHeaders } from '../lookup-headers.js';
import type { Catalogue } from '../../../catalogue/catalogue.js';
import type { OperationDeclaration } from '../../../catalogue/operation.js';
import { LookupError, type LookupErrorCode } from '../../../lookup/lookup-error.js';
import type { LookupPipeline } from '../../../lookup/lookup-pipeline.js';
import type { BoundCall, RefusedCall } from '../../../lookup/lookup-request.js';
import { memoizedEncoding } from '../../../lookup/result-memo.js';
import { jsonTextOf } from '../../../results/index.js';
import { internalError } from '../../../shared/internal-error.js';
import { baseUrlOf } from '../../base-url.js';
import { parseBasicAuth } from '../../auth/basic-auth.js';
import { originForm } from '../../request-target.js';
import { bindJsonSegments, splitJsonPath } from './json-path.js';
import { ConnectionDelivery } from '../answer-delivery.js';
import { replyWhenSettled } from '../reply-when-settled.js';

export interface JsonPluginOptions {
  /** Where the method named in the path is looked up. */
  readonly catalogue: Catalogue;
  readonly pipeline: LookupPipeline;
  readonly realm: string;
  readonly baseUrl: string | undefined;
}

const PREFIX = '/api/json.aspx/';

/** How the JSON interface answers a LookupError: a status and the headers that go with it. */
interface JsonWireError {
  readonly status: 401 | 403 | 422 | 429 | 500;
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
  // Also an extension: 422 for a key reused with another query, as the IETF Idempotency-Key
  // header draft (draft-ietf-httpapi-idempotency-key-header, section 2.7) and payment APIs answer.
  IDEMPOTENCY_CONFLICT: { status: 422 },
  // No client is left to read it (issue 31); the status only labels the attempt in logs and metrics.
  CLIENT_GONE: { status: 500 },
  // Extensions too (issue 33): a key's own rules refuse the call (403, as a scoped token is
  // refused), and a key's spent cap answers like a quota, with Retry-After at the period's turn.
  KEY_NOT_ALLOWED: { status: 403 },
  KEY_CAP_REACHED: { status: 429, retryAfter: true },
  INTERNAL: { status: 500 },
};

/** The operation named by the path's method segment; method names are case sensitive. */
function resolveOperation(catalogue: Catalogue, name: string): OperationDeclaration {
  const op = catalogue.find(name);
  if (op) return op;
  const near = catalogue.findIgnoringCase(name);
  const shown = name.length > 64 ? `${name.slice(0, 64)}...` : name;
  throw new LookupError(
    'UNKNOWN_OPERATION',
    near ? `Unknown method ${shown}: method names are case sensitive; did you mean ${near.name}?` : `Unknown method ${shown}`,
  );
}

/**
 * The operation of the path and its arguments. An unknown method or path values of the wrong
 * shape are not answered here but handed over as a refusal: the JSON interface answers 401 (and a
 * rate limit) before them, and the pipeline raises the refusal after authenticating.
 */
function bindCall(catalogue: Catalogue, method: string, segments: readonly string[]): BoundCall | RefusedCall {
  let operation: OperationDeclaration | undefined;
  try {
    operation = resolveOperation(catalogue, method);
    return { operation, args: bindJsonSegments(operation, segments) };
  } catch (error) {
    if (error instanceof LookupError) return { operation, refusal: error };
    throw error;
  }
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
      .header('access-control-allow-headers', 'Authorization, Content-Type, Idempotency-Key')
      .header('access-control-max-age', '86400')
      .send(),
  );

  // A lookup costs a credit, and an honest HEAD would have to run it to know the GET's status and
  // headers (RFC 9110 section 9.3.2), then throw the paid answer away. So HEAD is refused here
  // (405 lists what the resource takes, RFC 9110 section 15.5.6); pages that cost nothing keep it.
  app.head(`${PREFIX}*`, (_request, reply) => reply.code(405).header('allow', 'GET, OPTIONS').type('text/plain; charset=utf-8').send('HEAD is not allowed: a lookup is charged; use GET'));

  app.get(`${PREFIX}*`, { exposeHeadRoute: false }, (request, reply) => {
    // Before the lookup: an invalid Host is a 400 from the app's error handler (base-url.ts).
    const baseUrl = baseUrlOf(request, options.baseUrl);
    replyWhenSettled(
      reply,
      () => {
        const { method, segments } = splitJsonPath(originForm(request.raw.url ?? ''), PREFIX);
        return options.pipeline.execute({
          call: bindCall(options.catalogue, method, segments),
          auth: { mode: 'api-key', basic: parseBasicAuth(request.headers.authorization) },
          interface: 'json',
          requestId: request.id,
          // Paid only if the answer can be written to this connection (issue 31).
          delivery: new ConnectionDelivery(request.raw, reply.raw),
          baseUrl,
          idempotencyKey: request.headers['idempotency-key'],
          // A key's allowed addresses are checked against it (issue 33); the JSON interface has no anonymous calls.
          caller: { address: request.ip, sentAuthorization: request.headers.authorization !== undefined },
        });
      },
      (outcome) => {
        setOutcomeHeaders(reply, outcome);
        void reply
          .code(200)
          .type('application/json; charset=utf-8')
          .header('x-credits-charged', String(outcome.charged))
          .header('x-credits-remaining', String(outcome.balance))
          .send(memoizedEncoding(outcome.result, 'json', () => jsonTextOf(outcome.result)));
      },
      (error) => {
        if (!(error instanceof LookupError)) {
          sendError(reply, 500, internalError(request, error, 'lookup failed unexpectedly'));
          return;
        }
        const wire = JSON_ERRORS[error.code];
        if (wire.challenge) reply.header('www-authenticate', `Basic realm="${options.realm}", charset="UTF-8"`);
        if (wire.retryAfter && error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
        sendError(reply, wire.status, error.message);
      },
    );
  });
  return Promise.resolve();
};
