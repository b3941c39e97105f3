import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { setOutcomeHeaders } from '../lookup-headers.js';
import type { OperationDeclaration } from '../../../catalogue/operation.js';
import { int32Rule } from '../../../catalogue/input-rules.js';
import { LookupError, type LookupErrorCode } from '../../../lookup/lookup-error.js';
import type { LookupPipeline } from '../../../lookup/lookup-pipeline.js';
import type { LookupResult } from '../../../results/result-documents.js';
import { memoizedEncoding } from '../../../lookup/result-memo.js';
import { internalError } from '../../../shared/internal-error.js';
import { baseUrlOf, InvalidHostError } from '../../base-url.js';
import { parseBasicAuth } from '../../auth/basic-auth.js';
import { originForm } from '../../request-target.js';
import type { ServiceEndpoint } from '../service-endpoints.js';
import { decodeBody, parseMediaType, RequestBodyError } from '../request-body.js';
import { resultRootName, writeResultElement } from '../result-encoder.js';
import { XmlWriter } from '../../../xml/xml-writer.js';
import { XSD_NS, XSI_NS } from '../soap/soap-envelope.js';
import { ConnectionDelivery } from '../answer-delivery.js';
import { replyWhenSettled } from '../reply-when-settled.js';
import type { LookupOutcome } from '../../../lookup/lookup-request.js';

export interface AsmxHttpPluginOptions {
  readonly endpoints: readonly ServiceEndpoint[];
  readonly pipeline: LookupPipeline;
  readonly baseUrl: string | undefined;
  readonly bodyLimit: number;
}

/** An error in ASMX's GET/POST form: 500, plain text, message + CRLF (compat-notes "Errors"). */
class AsmxHttpError extends Error {
  override readonly name = 'AsmxHttpError';
  constructor(
    message: string,
    readonly status = 500,
  ) {
    super(message);
  }
}

/**
 * How the GET/POST bindings answer a LookupError. The status and form are always the same: ASMX
 * answers an exception thrown by an operation with 500 and the message as plain text
 * (compat-notes "Errors"), whatever it was; what a code decides is only the headers beside it.
 */
interface AsmxHttpWireError {
  /** Sends `Retry-After` with the error's wait in seconds. */
  readonly retryAfter: boolean;
}

/** Every LookupError code's answer. A Record, so a new code does not compile until it has one here. */
const HTTP_ERRORS: Readonly<Record<LookupErrorCode, AsmxHttpWireError>> = {
  UNAUTHORIZED: { retryAfter: false },
  ACCOUNT_DISABLED: { retryAfter: false },
  UNKNOWN_OPERATION: { retryAfter: false },
  INVALID_INPUT: { retryAfter: false },
  NOT_FOUND: { retryAfter: false },
  INSUFFICIENT_CREDITS: { retryAfter: false },
  UPSTREAM_UNAVAILABLE: { retryAfter: false },
  // Rate limits keep the binding's error form (500 plain text); Retry-After is extra.
  RATE_LIMITED: { retryAfter: true },
  IDEMPOTENCY_CONFLICT: { retryAfter: false },
  // No client is left to read it (issue 31).
  CLIENT_GONE: { retryAfter: false },
  KEY_NOT_ALLOWED: { retryAfter: false },
  // A cap of a day or a month turns: Retry-After says when (none for a total cap).
  KEY_CAP_REACHED: { retryAfter: true },
  INTERNAL: { retryAfter: false },
};

/** The bare result document of the GET/POST bindings: root named after the result type, 2-space indented. */
export function writeHttpResult(result: LookupResult, namespace: string): string {
  const w = new XmlWriter(true).declaration();
  const attributes: ReadonlyArray<readonly [string, string]> = [
    ['xmlns:xsd', XSD_NS],
    ['xmlns:xsi', XSI_NS],
    ['xmlns', namespace],
  ];
  writeResultElement(w, resultRootName(result), attributes, result, 'http');
  return w.toString();
}

/**
 * Values by parameter name from query or form pairs. Names match case-insensitively, the first
 * occurrence wins, an alias counts when the parameter's own name is absent, unknown names are
 * ignored; a required parameter that is absent is an error.
 */
function bindPairs(op: OperationDeclaration, pairs: URLSearchParams): Record<string, string> {
  const byLowerName = new Map<string, string>();
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    if (!byLowerName.has(key)) byLowerName.set(key, value);
  }
  const args: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const param of op.parameters) {
    let value = byLowerName.get(param.name.toLowerCase());
    for (const alias of param.aliases ?? []) value ??= byLowerName.get(alias.toLowerCase());
    if (value === undefined) {
      if (param.required) throw new AsmxHttpError(`Missing parameter: ${param.name}.`);
      continue;
    }
    // The GET/POST bindings send every parameter as text; ASMX converts ints before the call.
    if (param.xmlType === 's:int' && !int32Rule.normalise(value).ok) {
      throw new AsmxHttpError(`Cannot convert ${value} to System.Int32.`);
    }
    args[param.name] = value;
  }
  return args;
}

/**
 * HTTP GET and HTTP POST (form) on `/api/{service}.asmx/{Operation}` (issue 3 "Endpoints"):
 * parameters from the query string or the form, bare result XML, ASMX-style plain-text errors.
 */
export const asmxHttpPlugin: FastifyPluginAsync<AsmxHttpPluginOptions> = (app, options) => {
  // Every body reaches the handler, which answers ASMX's "Request format is invalid: {type}.".
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.bodyLimit }, (_request, body, done) => {
    done(null, body);
  });

  const sendError = (reply: FastifyReply, status: number, message: string): FastifyReply =>
    reply.code(status).type('text/plain; charset=utf-8').send(`${message}\r\n`);

  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status === 413) return sendError(reply, 413, `Request body is larger than ${options.bodyLimit} bytes.`);
    if (error instanceof InvalidHostError) return sendError(reply, status, `${error.message}.`);
    if (status < 500) return sendError(reply, status, 'Request format is invalid.');
    return sendError(reply, 500, `${internalError(request, error, 'GET/POST request failed')}.`);
  });

  for (const endpoint of options.endpoints) {
    const encodingKey = `http\u0000${endpoint.namespace}`;
    const handle = (request: FastifyRequest<{ Params: { operation: string } }>, reply: FastifyReply, verb: 'GET' | 'POST'): void => {
      const name = request.params.operation;
      // Before the lookup: an invalid Host goes to the error handler above as a 400 (base-url.ts).
      const baseUrl = baseUrlOf(request, options.baseUrl);
      const start = (): Promise<LookupOutcome> => {
        const op = endpoint.find(name);
        if (!op) {
          const near = endpoint.findIgnoringCase(name);
          throw new AsmxHttpError(
            near
              ? `${name} Web Service method name is not valid. Method names are case sensitive: did you mean ${near.name}?`
              : `${name} Web Service method name is not valid.`,
          );
        }
        let pairs: URLSearchParams;
        if (verb === 'GET') {
          pairs = new URLSearchParams(originForm(request.raw.url ?? '').split('?').slice(1).join('?'));
        } else {
          const media = parseMediaType(request.headers['content-type']);
          if (media.type !== 'application/x-www-form-urlencoded') {
            throw new AsmxHttpError(`Request format is invalid: ${request.headers['content-type'] ?? ''}.`);
          }
          const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
          pairs = new URLSearchParams(decodeBody(body, request.headers['content-encoding'], media.parameters.get('charset'), options.bodyLimit));
        }
        return options.pipeline.execute({
          call: { operation: op, args: bindPairs(op, pairs) },
          auth: { mode: 'username-parameter', basic: parseBasicAuth(request.headers.authorization) },
          caller: { address: request.ip, sentAuthorization: request.headers.authorization !== undefined },
          interface: verb === 'GET' ? 'http-get' : 'http-post',
          requestId: request.id,
          // Paid only if the answer can be written to this connection (issue 31).
          delivery: new ConnectionDelivery(request.raw, reply.raw),
          baseUrl,
          idempotencyKey: request.headers['idempotency-key'],
        });
      };
      const answer = (outcome: LookupOutcome): void => {
        setOutcomeHeaders(reply, outcome);
        const xml = memoizedEncoding(outcome.result, encodingKey, () => writeHttpResult(outcome.result, endpoint.namespace));
        void reply.code(200).type('text/xml; charset=utf-8').send(xml);
      };
      const fail = (error: unknown): void => {
        if (error instanceof AsmxHttpError || error instanceof RequestBodyError) sendError(reply, error.status, error.message);
        else if (error instanceof LookupError) {
          const wire = HTTP_ERRORS[error.code];
          if (wire.retryAfter && error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
          sendError(reply, 500, error.message);
        } else sendError(reply, 500, `${internalError(request, error, 'GET/POST lookup failed unexpectedly')}.`);
      };
      replyWhenSettled(reply, start, answer, fail);
    };
    // HEAD would run (and charge) the lookup only to drop its answer: refused, as on the JSON
    // interface (json.plugin.ts). ASMX itself knew only GET and POST on these paths.
    app.get<{ Params: { operation: string } }>(`${endpoint.definition.path}/:operation`, { exposeHeadRoute: false }, (request, reply) => {
      handle(request, reply, 'GET');
    });
    app.head(`${endpoint.definition.path}/:operation`, (_request, reply) => sendError(reply.header('allow', 'GET, POST'), 405, 'HEAD is not allowed: a lookup is charged; use GET or POST.'));
    app.post<{ Params: { operation: string } }>(`${endpoint.definition.path}/:operation`, (request, reply) => {
      handle(request, reply, 'POST');
    });
  }
  return Promise.resolve();
};
