import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { setOutcomeHeaders } from '../lookup-headers.js';
import { LookupError, type LookupErrorCode } from '../../../lookup/lookup-error.js';
import type { LookupPipeline } from '../../../lookup/lookup-pipeline.js';
import { memoizedEncoding } from '../../../lookup/result-memo.js';
import { internalError } from '../../../shared/internal-error.js';
import { baseUrlOf } from '../../base-url.js';
import { parseBasicAuth } from '../../auth/basic-auth.js';
import type { ServiceEndpoint } from '../service-endpoints.js';
import { decodeBody, parseMediaType, RequestBodyError } from '../request-body.js';
import { readXml, XmlReadError } from '../../../xml/xml-reader.js';
import { ConnectionDelivery } from '../answer-delivery.js';
import { replyWhenSettled } from '../reply-when-settled.js';
import type { LookupOutcome } from '../../../lookup/lookup-request.js';
import {
  readEnvelope,
  readParameters,
  SOAP_CONTENT_TYPE,
  SoapRequestError,
  writeSoapFault,
  writeSoapResponse,
  type SoapVersion,
} from './soap-envelope.js';

export interface SoapPluginOptions {
  readonly endpoints: readonly ServiceEndpoint[];
  readonly pipeline: LookupPipeline;
  readonly baseUrl: string | undefined;
  readonly bodyLimit: number;
}

/** ASMX's wording for an exception thrown by the operation (compat-notes "Errors"). */
const PROCESS_PREFIX = 'Server was unable to process request. ---> ';

/** ASMX's wording when the request cannot be read (compat-notes "Errors"). */
const READ_PREFIX = 'Server was unable to read request. ---> ';

/** How SOAP answers a LookupError: always HTTP 500, as ASMX does for a fault; the kind says whose fault it is. */
interface SoapWireError {
  /** `Client` (1.2: Sender) when the caller must change what it sends, `Server` (Receiver) otherwise. */
  readonly fault: SoapRequestError['faultCode'];
  /** Sends `Retry-After` with the error's wait in seconds, beside the fault. */
  readonly retryAfter?: true;
}

/**
 * Every LookupError code's fault. Bad input, authentication and rate limits are the caller's to
 * fix; not found, out of credit and an upstream down are Server faults, as issue 3 specifies and
 * as ASMX reports exceptions thrown by an operation. A Record, so a new code does not compile
 * until it has one here.
 */
const SOAP_ERRORS: Readonly<Record<LookupErrorCode, SoapWireError>> = {
  UNAUTHORIZED: { fault: 'Client' },
  ACCOUNT_DISABLED: { fault: 'Client' },
  UNKNOWN_OPERATION: { fault: 'Client' },
  INVALID_INPUT: { fault: 'Client' },
  NOT_FOUND: { fault: 'Server' },
  INSUFFICIENT_CREDITS: { fault: 'Server' },
  UPSTREAM_UNAVAILABLE: { fault: 'Server' },
  // A rate-limited call is a Client fault like any other (HTTP 500); Retry-After is extra.
  RATE_LIMITED: { fault: 'Client', retryAfter: true },
  // The caller reused its Idempotency-Key for another lookup: its to fix.
  IDEMPOTENCY_CONFLICT: { fault: 'Client' },
  // No client is left to read it (issue 31).
  CLIENT_GONE: { fault: 'Client' },
  // The key's own rules (issue 33): the caller's key, its to fix or to use within its limits.
  KEY_NOT_ALLOWED: { fault: 'Client' },
  KEY_CAP_REACHED: { fault: 'Client', retryAfter: true },
  INTERNAL: { fault: 'Server' },
};

const SOAP_MEDIA_TYPES = new Set(['text/xml', 'application/soap+xml']);

/** Strips one pair of surrounding double quotes and URL-decodes, as ASMX reads SOAPAction. */
function soapActionOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  let value = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * SOAP 1.1 and 1.2 on `/api/reg.asmx` and `/api/bespokeapi.asmx` (issue 3 "Endpoints"). Decodes
 * the envelope into a LookupRequest and encodes the result or the fault; nothing else.
 */
export const soapPlugin: FastifyPluginAsync<SoapPluginOptions> = (app, options) => {
  // Every body arrives as bytes: the handler decides what the content type means, so an
  // unexpected type still gets a SOAP fault rather than Fastify's JSON error.
  // Fastify's own JSON and text parsers would answer first (with a 400) in this scope.
  app.removeAllContentTypeParsers();
  const asBytes = (_request: FastifyRequest, body: Buffer, done: (error: Error | null, body?: Buffer) => void): void => {
    done(null, body);
  };
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.bodyLimit }, asBytes);
  // The SOAP types by name too: Fastify remembers a named parser per Content-Type value, while it
  // parses the header again on every request that falls through to '*'.
  app.addContentTypeParser(['text/xml', 'application/soap+xml'], { parseAs: 'buffer', bodyLimit: options.bodyLimit }, asBytes);

  const sendFault = (reply: FastifyReply, version: SoapVersion, status: number, kind: SoapRequestError['faultCode'], message: string): FastifyReply =>
    reply.code(status).type(SOAP_CONTENT_TYPE[version]).send(writeSoapFault(version, kind, message));

  // Errors raised before the handler (body too large, aborted upload) are faults too.
  app.setErrorHandler((error, request, reply) => {
    const version: SoapVersion = parseMediaType(request.headers['content-type']).type === 'application/soap+xml' ? '1.2' : '1.1';
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status === 413) return sendFault(reply, version, 413, 'Client', `The request body is larger than ${options.bodyLimit} bytes`);
    if ((error as { code?: string }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendFault(reply, version, 415, 'Client', 'Unsupported content type: send text/xml (SOAP 1.1) or application/soap+xml (SOAP 1.2)');
    }
    if (status < 500) return sendFault(reply, version, status, 'Client', 'The request could not be read');
    return sendFault(reply, version, 500, 'Server', `${PROCESS_PREFIX}${internalError(request, error, 'SOAP request failed')}`);
  });

  for (const endpoint of options.endpoints) {
    // The memoizedEncoding key of each operation and version, built once rather than per request.
    const encodingKeys: Readonly<Record<SoapVersion, Map<string, string>>> = { '1.1': new Map(), '1.2': new Map() };
    const encodingKey = (version: SoapVersion, operation: string): string => {
      let key = encodingKeys[version].get(operation);
      if (key === undefined) {
        key = `soap\u0000${version}\u0000${operation}\u0000${endpoint.namespace}`;
        encodingKeys[version].set(operation, key);
      }
      return key;
    };
    app.post(endpoint.definition.path, (request: FastifyRequest, reply) => {
      const media = parseMediaType(request.headers['content-type']);
      // The content type chooses the version; the envelope namespace is checked against it below.
      const declared: SoapVersion = media.type === 'application/soap+xml' ? '1.2' : '1.1';
      let version = declared;
      // Before the lookup: an invalid Host is a Client fault from the error handler (base-url.ts).
      const baseUrl = baseUrlOf(request, options.baseUrl);
      const start = (): Promise<LookupOutcome> => {
        if (!SOAP_MEDIA_TYPES.has(media.type)) {
          throw new SoapRequestError(415, 'Client', `Unsupported content type ${media.type || '(none)'}: send text/xml (SOAP 1.1) or application/soap+xml (SOAP 1.2)`);
        }
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const text = decodeBody(body, request.headers['content-encoding'], media.parameters.get('charset'), options.bodyLimit);
        const envelope = readEnvelope(readXml(text));
        version = envelope.version;
        if (envelope.version === '1.1' && media.type !== 'text/xml') {
          throw new SoapRequestError(415, 'Client', `A SOAP 1.1 envelope must be sent as text/xml, not ${media.type}`);
        }

        const action = envelope.version === '1.1' ? soapActionOf(request.headers.soapaction) : media.parameters.get('action');
        const element = envelope.operation;
        let op = action === undefined || action === '' ? undefined : endpoint.findByAction(action);
        if (op === undefined) {
          if (envelope.version === '1.1' && action !== undefined) {
            throw new SoapRequestError(500, 'Client', `Server did not recognize the value of HTTP Header SOAPAction: ${action}.`);
          }
          // SOAP 1.2 without a usable action, or 1.1 without the header: the body element decides.
          op = element.uri === endpoint.namespace ? endpoint.find(element.local) : undefined;
          if (op === undefined) {
            throw new SoapRequestError(500, 'Client', `Server did not recognize the request element {${element.uri}}${element.local}.`);
          }
        }
        if (element.local !== op.name || element.uri !== endpoint.namespace) {
          throw new SoapRequestError(
            500,
            'Client',
            `${READ_PREFIX}The body element {${element.uri}}${element.local} was not expected; ${op.name} takes {${endpoint.namespace}}${op.name}.`,
          );
        }

        return options.pipeline.execute({
          call: { operation: op, args: readParameters(element, op, endpoint.namespace) },
          auth: { mode: 'username-parameter', basic: parseBasicAuth(request.headers.authorization) },
          caller: { address: request.ip, sentAuthorization: request.headers.authorization !== undefined },
          interface: version === '1.1' ? 'soap11' : 'soap12',
          requestId: request.id,
          // Paid only if the answer can be written to this connection (issue 31).
          delivery: new ConnectionDelivery(request.raw, reply.raw),
          baseUrl,
          idempotencyKey: request.headers['idempotency-key'],
        });
      };
      const answer = (outcome: LookupOutcome): void => {
        const op = outcome.operation;
        setOutcomeHeaders(reply, outcome);
        void reply
          .code(200)
          .type(SOAP_CONTENT_TYPE[version])
          .send(memoizedEncoding(outcome.result, encodingKey(version, op.name), () => writeSoapResponse(version, op, endpoint.namespace, outcome.result)));
      };
      const fail = (error: unknown): void => {
        if (error instanceof SoapRequestError) sendFault(reply, version, error.status, error.faultCode, error.message);
        else if (error instanceof XmlReadError) sendFault(reply, version, 400, 'Client', `${READ_PREFIX}${error.message}`);
        else if (error instanceof RequestBodyError) sendFault(reply, version, error.status, 'Client', error.message);
        else if (error instanceof LookupError) {
          const wire = SOAP_ERRORS[error.code];
          if (wire.retryAfter && error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
          sendFault(reply, version, 500, wire.fault, `${PROCESS_PREFIX}${error.message}`);
        } else sendFault(reply, version, 500, 'Server', `${PROCESS_PREFIX}${internalError(request, error, 'SOAP lookup failed unexpectedly')}`);
      };
      replyWhenSettled(reply, start, answer, fail);
    });
  }
  return Promise.resolve();
};
