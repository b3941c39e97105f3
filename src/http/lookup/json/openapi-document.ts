import { readFileSync } from 'node:fs';
import { SAMPLE_DATASET_PATH } from '../../../bootstrap/seed.js';
import { Catalogue } from '../../../catalogue/catalogue.js';
import type { JsonSegment, OperationDeclaration, ParameterDeclaration } from '../../../catalogue/operation.js';
import { SERVICES } from '../../../catalogue/services.js';
import { codecOf, RESULT_CODECS, type ResultType } from '../../../results/index.js';
import { IDEMPOTENCY_KEY } from '../../../lookup/idempotent-replay.js';
import type { JsonSchema } from '../../../shared/json-schema.js';

/**
 * The OpenAPI 3.1 document of the JSON lookup interface (issue 16 "OpenAPI"), generated from the
 * catalogue and the result codecs as the WSDL is (wsdl-generator.ts): nothing here names an
 * operation. Each operation is one path per number of path values it takes: a trailing optional
 * segment (UKMOT's Make, CheckEuroNCap's Model, the second half of a KBA number) is a path of its
 * own, since OpenAPI path parameters are always required.
 */

/** Where the JSON interface lives; the document's server URL, relative to the service's origin. */
export const JSON_INTERFACE_PREFIX = '/api/json.aspx';

/** The version of the interface the document describes (not of this service's code). */
const INTERFACE_VERSION = '1.0.0';

// Media-type keys without parameters: the wire sends `; charset=utf-8`, and generated clients
// (openapi-fetch's helper types) look answers up by the bare type.
const TEXT_PLAIN = 'text/plain';
const JSON_TYPE = 'application/json';

const SECURITY_SCHEME = 'basicAuth';

const textBody = (example: string): JsonSchema => ({ [TEXT_PLAIN]: { schema: { type: 'string' }, example } });

/** Example parameter values of each operation (name -> parameter -> value). */
export type ParameterExamples = ReadonlyMap<string, Readonly<Record<string, string>>>;

/**
 * The parameter values of the first record of each operation in a JSON Lines dataset: its key, or
 * for a search (CheckEuroNCap) the record's own members named like the parameters. From the sample
 * dataset a fresh store is seeded with, so the examples answer 200 on a new installation.
 */
export function parameterExamples(catalogue: Catalogue, jsonLines: string): ParameterExamples {
  const examples = new Map<string, Record<string, string>>();
  for (const text of jsonLines.split('\n')) {
    if (text.trim() === '') continue;
    const line = JSON.parse(text) as Record<string, unknown>;
    const op = typeof line.operation === 'string' ? catalogue.find(line.operation) : undefined;
    if (!op || examples.has(op.name)) continue;
    const source = line.key ?? line[codecOf(op.resultType).importPayload.field];
    if (typeof source !== 'object' || source === null) continue;
    const values: Record<string, string> = {};
    for (const parameter of Catalogue.inputParameters(op)) {
      const value = (source as Record<string, unknown>)[parameter.name];
      // Key values are strings, or numbers for s:int parameters (CarSpecifications' year).
      if (typeof value === 'number') values[parameter.name] = String(value);
      else if (typeof value === 'string' && value.trim() !== '') values[parameter.name] = value;
      else if (parameter.example !== undefined) values[parameter.name] = parameter.example;
    }
    examples.set(op.name, values);
  }
  return examples;
}

/** The path values an operation can be called with: its required segments, then each optional one in turn. */
function pathVariants(op: OperationDeclaration): JsonSegment[][] {
  const segments = op.jsonPath.segments;
  const required = segments.filter((s) => !s.optional).length;
  const variants: JsonSegment[][] = [];
  for (let count = required; count <= segments.length; count++) variants.push(segments.slice(0, count));
  return variants;
}

/**
 * The path parameter of one segment. A segment that alone fills its parameter takes the
 * parameter's input rule; one of several filling a parameter (a KBA number's HSN and TSN) is a
 * part, and the rule applies to the joined value.
 */
function pathParameter(op: OperationDeclaration, variant: readonly JsonSegment[], segment: JsonSegment, examples: ParameterExamples): JsonSchema {
  const parameter: ParameterDeclaration | undefined = op.parameters.find((p) => p.name === segment.parameter);
  if (!parameter) throw new Error(`${op.name}: path segment ${segment.label} fills no parameter ${segment.parameter}`);
  const parts = variant.filter((s) => s.parameter === segment.parameter);
  let description = parameter.description;
  let schema: JsonSchema = parameter.rule?.schema ?? { type: 'string' };
  if (parts.length > 1) {
    const joinWith = op.jsonPath.joinWith ?? '';
    description = `Part ${parts.indexOf(segment) + 1} of ${parts.length} of ${parameter.name} (${parameter.description}), joined with "${joinWith}"`;
    schema = { type: 'string', minLength: 1 };
  } else if (parameter.rule) {
    description = `${parameter.description}. ${parameter.rule.description}`;
  }
  const whole = examples.get(op.name)?.[parameter.name];
  const example = parts.length > 1 ? whole?.split(op.jsonPath.joinWith ?? '')[parts.indexOf(segment)] : whole;
  return { name: segment.label, in: 'path', required: true, description, schema, ...(example ? { example } : {}) };
}

function operationId(op: OperationDeclaration, variant: readonly JsonSegment[], required: number): string {
  const optional = variant.slice(required).map((s) => s.label);
  return optional.length === 0 ? op.name : `${op.name}With${optional.join('And')}`;
}

function costText(op: OperationDeclaration): string {
  return `A successful lookup costs ${op.cost} credit${op.cost === 1 ? '' : 's'} (none for a test plate${op.resultType === 'ArrayOfPreAssessmentSearchResult' ? ' or an empty list' : ''}).`;
}

function pathItem(op: OperationDeclaration, variant: readonly JsonSegment[], required: number, examples: ParameterExamples): JsonSchema {
  const services = op.services.map((id) => SERVICES[id].path).join(', ');
  return {
    // Every lookup takes the header; the path values are the operation's own.
    parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }],
    get: {
      operationId: operationId(op, variant, required),
      summary: `${op.name}: ${op.label}`,
      description: `${op.documentation} ${costText(op)} The same operation as ${op.name} on ${services}.`,
      tags: [op.label],
      parameters: variant.map((segment) => pathParameter(op, variant, segment, examples)),
      responses: {
        '200': { $ref: `#/components/responses/${RESULT_CODECS[op.resultType].xmlName}` },
        '400': { $ref: '#/components/responses/BadHost' },
        '401': { $ref: '#/components/responses/Unauthorized' },
        '403': { $ref: '#/components/responses/KeyNotAllowed' },
        '422': { $ref: '#/components/responses/IdempotencyConflict' },
        '429': { $ref: '#/components/responses/RateLimited' },
        '500': { $ref: '#/components/responses/LookupFailed' },
      },
    },
  };
}

/** The original's balance page, at the site's root rather than under the JSON interface. */
export const CREDITS_PATH = '/ajax/getcredits.aspx';

function creditsPathItem(): JsonSchema {
  return {
    // Not under /api/json.aspx: the path's own server is the site's root.
    servers: [{ url: '/', description: 'This service' }],
    get: {
      operationId: 'GetCredits',
      summary: 'The balance of an account',
      description:
        "The original service's balance page: the account's credits as a plain integer, 0 for an unknown user name. No credentials, nothing charged; " +
        'the operator can turn it off (GETCREDITS_ENABLED=false), and it then answers 404.',
      tags: ['Credits'],
      security: [],
      parameters: [{ name: 'username', in: 'query', required: true, description: 'The account username (the parameter name is case-insensitive)', schema: { type: 'string' }, example: 'demo' }],
      responses: {
        '200': { $ref: '#/components/responses/Balance' },
        '404': { description: 'The operator turned the page off (GETCREDITS_ENABLED=false)' },
      },
    },
  };
}

/** The path of a variant, relative to the server URL: `/CheckUSA/{RegistrationNumber}/{State}`. */
export function variantPath(op: OperationDeclaration, variant: readonly JsonSegment[]): string {
  return `/${op.name}${variant.map((s) => `/{${s.label}}`).join('')}`;
}

function components(types: readonly ResultType[]): JsonSchema {
  const schemas: Record<string, JsonSchema> = {};
  const responses: Record<string, JsonSchema> = {};
  for (const type of types) {
    const codec = RESULT_CODECS[type];
    schemas[codec.xmlName] = codec.jsonSchema();
    responses[codec.xmlName] = {
      description: `The lookup's result: ${codec.jsonDescription}.`,
      headers: {
        'x-credits-charged': { $ref: '#/components/headers/CreditsCharged' },
        'x-credits-remaining': { $ref: '#/components/headers/CreditsRemaining' },
        'x-lookup-source': { $ref: '#/components/headers/LookupSource' },
        'idempotent-replayed': { $ref: '#/components/headers/IdempotentReplayed' },
        'x-request-id': { $ref: '#/components/headers/RequestId' },
      },
      content: { [JSON_TYPE]: { schema: { $ref: `#/components/schemas/${codec.xmlName}` } } },
    };
  }
  return {
    schemas,
    responses: {
      ...responses,
      BadHost: {
        description:
          'When BASE_URL is not set, links in answers (ImageUrl) are built from the Host header (or an absolute-form request target, or a trusted proxy\'s X-Forwarded-Host): ' +
          'one that is not a valid host name or address is refused before any lookup, and nothing is charged. With BASE_URL set the Host is not read.',
        headers: { 'x-request-id': { $ref: '#/components/headers/RequestId' } },
        content: textBody('The Host header is not a valid host name or address with an optional port'),
      },
      Unauthorized: {
        description: 'Missing or invalid credentials (the account username and its API key). Checked before anything else.',
        headers: { 'WWW-Authenticate': { $ref: '#/components/headers/WWWAuthenticate' }, 'x-request-id': { $ref: '#/components/headers/RequestId' } },
        content: textBody('Invalid username or API key'),
      },
      IdempotencyConflict: {
        description:
          'The Idempotency-Key was already used by this account for another lookup (another operation or other values): nothing is charged; send a new key for a new lookup. ' +
          'An extension of the original interface, as the IETF Idempotency-Key draft (section 2.7) and payment APIs answer.',
        headers: { 'x-request-id': { $ref: '#/components/headers/RequestId' } },
        content: textBody('Idempotency-Key 5f0c… was already used for CheckFrance AB123CD; use a new key for a different lookup'),
      },
      KeyNotAllowed: {
        description:
          "The API key's own rules do not allow this call: the operation is not among the key's allowed operations, or the client address is not in its allowed addresses. " +
          'Nothing is charged. An extension of the original interface, which had no per-key rules.',
        headers: { 'x-request-id': { $ref: '#/components/headers/RequestId' } },
        content: textBody('API key contractor may not call CheckFrance: it is limited to CheckUSA'),
      },
      RateLimited: {
        description:
          "The account's rate limit, the API key's own rate limit, or the API key's credit cap for its period is reached; nothing is charged. " +
          'Retry-After says when the window or the cap period turns (a cap in total has none). An extension of the original interface, which had no rate limits.',
        headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' }, 'x-request-id': { $ref: '#/components/headers/RequestId' } },
        content: textBody('Rate limit exceeded: account acme may make 10 requests per second; retry after 1 s'),
      },
      Balance: {
        description: "The account's balance as a plain integer; 0 for an unknown user name, as the original answered.",
        content: { [TEXT_PLAIN]: { schema: { type: 'string', pattern: '^-?[0-9]+$' }, example: '42' } },
      },
      LookupFailed: {
        description:
          'Every other error, as a human-readable message (never JSON, never a stack trace): an unknown method, the wrong number of path values, ' +
          'an invalid value, a record that is not in the data, an exhausted or disabled account, or an internal error with a request id to quote. Nothing is charged.',
        headers: { 'x-request-id': { $ref: '#/components/headers/RequestId' } },
        content: textBody('France Lookup failed'),
      },
    },
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Makes a retry safe: a repeat of the same lookup with the same key within IDEMPOTENCY_RETENTION_HOURS answers the stored result, charges nothing and says Idempotent-Replayed: true; ' +
          'the same key for another lookup answers 422. One key per request.',
        schema: { type: 'string', pattern: IDEMPOTENCY_KEY.source, maxLength: 255 },
        example: '5f0c2e8e-7d1a-4c3b-9a55-2b8f1e0d4c6a',
      },
    },
    headers: {
      CreditsCharged: {
        description: 'Credits this lookup cost: 0 for a test plate or an empty rating list.',
        required: true,
        schema: { type: 'integer', minimum: 0 },
      },
      CreditsRemaining: {
        description: "The account's balance after this lookup.",
        required: true,
        schema: { type: 'integer' },
      },
      LookupSource: {
        description:
          'The source that answered: `store` (data the operator imported), a free register (`dvla`, `rdw`...), a paid upstream (`regcheck`...), or `cache` (an upstream answer served from the shared cache). Absent on an Idempotency-Key replay.',
        schema: { type: 'string' },
      },
      WWWAuthenticate: {
        description: 'The HTTP Basic challenge, with the realm the operator configured (AUTH_REALM).',
        required: true,
        schema: { type: 'string' },
        example: 'Basic realm="vehicle-lookup", charset="UTF-8"',
      },
      IdempotentReplayed: {
        description: 'Sent, as true, when the answer is a replay of an earlier lookup with the same Idempotency-Key (X-Credits-Charged is then 0).',
        schema: { type: 'string', enum: ['true'] },
      },
      RequestId: {
        description: "This request's id, also on its ledger row and in the logs: quote it when asking about a lookup.",
        required: true,
        schema: { type: 'string' },
      },
      RetryAfter: {
        description: "Whole seconds until the rate limit's window ends.",
        required: true,
        schema: { type: 'integer', minimum: 1 },
      },
    },
    securitySchemes: {
      [SECURITY_SCHEME]: {
        type: 'http',
        scheme: 'basic',
        description: 'HTTP Basic with the account username and its API key (`curl -u demo:KEY`).',
      },
    },
  };
}

/** The document as data, operations in catalogue order; `examples` fill the parameters' `example`. */
export function generateOpenApi(catalogue: Catalogue, examples: ParameterExamples = new Map()): JsonSchema {
  const paths: Record<string, JsonSchema> = {};
  for (const op of catalogue.operations) {
    const variants = pathVariants(op);
    const required = variants[0]?.length ?? 0;
    for (const variant of variants) {
      const path = variantPath(op, variant);
      if (path in paths) throw new Error(`Two operations share the JSON path ${path}`);
      paths[path] = pathItem(op, variant, required, examples);
    }
  }
  paths[CREDITS_PATH] = creditsPathItem();
  const types = [...new Set(catalogue.operations.map((op) => op.resultType))];
  return {
    openapi: '3.1.0',
    info: {
      title: 'vehicle-lookup JSON interface',
      version: INTERFACE_VERSION,
      description:
        'Vehicle lookups as `GET /api/json.aspx/{Method}/{value}/...`, wire-compatible with the JSON interface of the original service. ' +
        'Path values are percent-encoded; a space may be sent as `+` or `%20`. Method names are case-sensitive. ' +
        'Every response carries `Access-Control-Allow-Origin: *`; HEAD of a lookup answers 405 and costs nothing.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: JSON_INTERFACE_PREFIX, description: 'This service' }],
    security: [{ [SECURITY_SCHEME]: [] }],
    // Each operation's tag is its label (one per country or register), declared here once.
    tags: [
      ...[...new Set(catalogue.operations.map((op) => op.label))].map((name) => ({
        name,
        description: catalogue.operations.filter((op) => op.label === name).map((op) => op.name).join(', '),
      })),
      { name: 'Credits', description: "The original's balance page" },
    ],
    paths,
    components: components(types),
  };
}

/** The examples of the sample dataset a fresh store is seeded with (bootstrap/seed.ts). */
export function sampleParameterExamples(catalogue: Catalogue): ParameterExamples {
  return parameterExamples(catalogue, readFileSync(SAMPLE_DATASET_PATH, 'utf8'));
}

/**
 * The document as served and committed (docs/openapi/lookup.json), with the sample dataset's
 * examples: two-space JSON and a newline.
 */
export function renderOpenApi(catalogue: Catalogue): string {
  return `${JSON.stringify(generateOpenApi(catalogue, sampleParameterExamples(catalogue)), null, 2)}\n`;
}
