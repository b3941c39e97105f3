import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { codesOfStatus } from './api-error-codes.js';
import { errorAnswer, exampleOf } from './api-responses.js';
import type { Schema } from './api-schemas.js';

/**
 * The media types of a success answer: a Fastify response schema is either the JSON body's schema
 * or `{content: {mediaType: {schema}}}` (the ledger's CSV); each with an example made from it.
 */
function contentOf(response: Schema): Record<string, unknown> {
  const byType = (response.content ?? { 'application/json': { schema: response } }) as Record<string, { schema: Schema }>;
  return Object.fromEntries(Object.entries(byType).map(([type, { schema }]) => [type, { schema, example: exampleOf(schema) }]));
}

/** A route as the document needs it. */
interface CollectedRoute {
  readonly method: string;
  readonly url: string;
  readonly schema: FastifySchema & Record<string, unknown>;
  readonly public: boolean;
}

/** What each error status means, in the words of the admin and account APIs (the codes follow). */
const ERRORS: Readonly<Record<number, string>> = {
  400: 'Invalid input (the field is named), or a request that cannot be read',
  401: 'Not logged in, or an unknown or revoked token (login: a wrong name or password)',
  403: 'The role, token scope or CSRF token does not allow this',
  404: 'No such account, key, user, token, import, webhook endpoint or route',
  409: 'The name is taken, or the account has fewer credits than asked for',
  413: 'The body is larger than the limit (1 MiB for JSON; IMPORT_MAX_BYTES for an upload)',
  415: 'The body is not in one of the accepted media types',
  429: 'Too many requests, failed logins or sign-ups: wait Retry-After seconds',
  500: 'An unexpected failure; the message quotes the request id',
  503: 'The service cannot take the job now',
};

const SUCCESS: Readonly<Record<number, string>> = { 200: 'Done', 201: 'Created', 202: 'Accepted', 204: 'Done; no content' };

/** The document's tags, in order, with what each groups; a route with a tag not listed here fails the document. */
const TAGS: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'admin: session', description: 'Operators log in, out and change their password' },
  { name: 'admin: accounts', description: 'Customer accounts: credits, keys, ledger, usage and users' },
  { name: 'admin: operators', description: 'Operator users and operator API tokens' },
  { name: 'admin: audit', description: 'The append-only audit log of every change' },
  { name: 'admin: operations', description: 'Providers, usage over every account, lookup statistics and test plates' },
  { name: 'admin: imports', description: 'Dataset uploads imported as jobs' },
  { name: 'admin: alerts', description: "Low-credit thresholds and webhook endpoints (an account's or the operators')" },
  { name: 'account: session', description: 'Customers log in, out and change their password' },
  { name: 'account: sign-up', description: 'Self-service sign-up, when the operator enabled it' },
  { name: 'account', description: 'The logged-in customer’s own account: balance, keys, ledger and usage' },
  { name: 'account: alerts', description: 'The own account’s low-credit thresholds and webhook endpoints' },
];

/** The statuses a body-taking route answers whatever its handler does (Fastify's body parser). */
const BODY_STATUSES = [400, 413, 415];

/** A route's success answers: the 2xx entries of its `response` schemas. */
function successes(route: { method: string; url: string; schema: FastifySchema }): Array<[number, Schema]> {
  const found = Object.entries((route.schema.response ?? {}) as Record<string, Schema>)
    .map(([status, schema]): [number, Schema] => [Number(status), schema])
    .filter(([status]) => status >= 200 && status < 300);
  if (found.length === 0) throw new Error(`${route.method.toUpperCase()} ${route.url} has no success response schema (schema.response)`);
  return found;
}

/**
 * The statuses a route can answer besides its success, from its schema and options: 400 when it
 * has any input, 401 and 403 unless it is public, 404 when its path names a thing, 400, 413 and
 * 415 when it takes a body (parsed or streamed), 429 always (every request of both APIs counts
 * against a rate limit), and whatever it declares in `errorStatuses` (409 for a create that can
 * collide, 401 for login...).
 */
export function errorStatuses(route: { url: string; schema: FastifySchema; public: boolean }): number[] {
  const { schema } = route;
  const named = (part: unknown): boolean => Object.keys((part as { properties?: object } | undefined)?.properties ?? {}).length > 0;
  const input = schema.body !== undefined || schema.consumes !== undefined || named(schema.params) || named(schema.querystring);
  const statuses = new Set<number>([429, ...(schema.errorStatuses ?? [])]);
  if (input) statuses.add(400);
  if (!route.public) [401, 403].forEach((status) => statuses.add(status));
  if (route.url.includes(':')) statuses.add(404);
  if (schema.body !== undefined || schema.consumes !== undefined) BODY_STATUSES.forEach((status) => statuses.add(status));
  return [...statuses].sort((a, b) => a - b);
}

/**
 * Who may call an operation, as its description says: every role reads, admins (and write-scope
 * tokens) and owners change; a route says otherwise in its schema's `access`.
 */
function accessOf(route: CollectedRoute, path: string): string {
  if (route.schema.access !== undefined) return route.schema.access;
  if (route.public) return 'No login needed.';
  const admin = path.startsWith('/admin/');
  if (route.method === 'get') return admin ? 'Any operator (admin or viewer), logged in or with an operator token of either scope.' : 'Any user of the account (owner or member), logged in.';
  return admin ? 'An admin, logged in (with X-CSRF-Token) or with a write-scope operator token.' : "The account's owner, logged in (with X-CSRF-Token).";
}

/** Who may call an operation: reads need the session (or a token); writes with the cookie also need its CSRF token. */
function securityOf(route: CollectedRoute, path: string): Array<Record<string, string[]>> {
  if (route.public) return [];
  const session = route.method === 'get' ? { session: [] } : { session: [], csrf: [] };
  return path.startsWith('/admin/') ? [session, { operatorToken: [] }] : [session];
}

/**
 * The OpenAPI 3.1 document of the admin and account APIs, generated from the route schemas
 * (STYLE.md 14: committed as docs/admin-openapi.json, checked for staleness by a test). Routes are
 * collected with an onRoute hook in each API's scope, so a route added there is in the document
 * without further work.
 */
export class OpenApiCollector {
  private readonly routes: CollectedRoute[] = [];

  /** Collects the routes registered from now on in `app`'s scope. */
  collect(app: FastifyInstance): void {
    app.addHook('onRoute', (route: RouteOptions) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        if (method === 'HEAD' || route.url.endsWith('/openapi.json') || route.url.endsWith('/docs') || route.url.includes('/docs/')) continue;
        this.routes.push({ method: method.toLowerCase(), url: route.url, schema: (route.schema ?? {}) as FastifySchema & Record<string, unknown>, public: (route.config as { public?: boolean } | undefined)?.public === true });
      }
    });
  }

  document(): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const route of [...this.routes].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))) {
      const path = route.url.replace(/:([A-Za-z]+)/g, '{$1}');
      const parameters = [...this.parameters(route.schema.params, 'path'), ...this.parameters(route.schema.querystring, 'query')];
      const body = route.schema.body as Schema | undefined;
      const consumes = route.schema.consumes;
      const responses: Record<string, unknown> = {};
      for (const [status, schema] of successes(route)) {
        responses[String(status)] = status === 204 ? { description: SUCCESS[status] } : { description: SUCCESS[status] ?? 'Done', content: contentOf(schema) };
      }
      for (const status of errorStatuses(route)) {
        const codes = codesOfStatus(status).map((code) => `\`${code}\``).join(', ');
        responses[String(status)] = {
          description: `${ERRORS[status] ?? 'Refused'}${codes === '' ? '' : ` (${codes})`}`,
          ...(status === 429 ? { headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } } : {}),
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        };
      }
      // A body read as a stream by the route: any bytes, in one of its media types.
      const streamed = consumes === undefined ? undefined : { required: true, content: Object.fromEntries(consumes.map((type) => [type, { schema: { type: 'string' } }])) };
      paths[path] = {
        ...paths[path],
        [route.method]: {
          operationId: `${route.method}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
          ...(route.schema.summary !== undefined ? { summary: route.schema.summary } : {}),
          description: [route.schema.description, accessOf(route, path)].filter((part) => part !== undefined).join(' '),
          ...(route.schema.tags !== undefined ? { tags: this.checkedTags(route) } : {}),
          ...(parameters.length > 0 ? { parameters } : {}),
          ...(body !== undefined ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
          ...(streamed !== undefined ? { requestBody: streamed } : {}),
          responses,
          security: securityOf(route, path),
        },
      };
    }
    return {
      openapi: '3.1.0',
      info: {
        title: 'vehicle-lookup admin and account API',
        version: '1',
        description:
          'Operators under /admin/api, customers under /account/api (their own account only). Writes with a session cookie send its CSRF token in X-CSRF-Token. ' +
          'Every answer carries X-Request-Id; an error answers `{"error": code, "message", "field"?}`, the codes in the Error schema.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'This service' }],
      tags: TAGS,
      paths,
      components: {
        schemas: { Error: errorAnswer },
        headers: {
          RetryAfter: { description: 'Whole seconds until the caller may try again', required: true, schema: { type: 'integer', minimum: 1 } },
        },
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: 'vl_session', description: 'Set by POST .../login' },
          csrf: { type: 'apiKey', in: 'header', name: 'X-CSRF-Token', description: 'The csrfToken answered by login; required on writes with the cookie' },
          operatorToken: { type: 'http', scheme: 'bearer', description: 'An operator API token (admin API only)' },
        },
      },
    };
  }

  private checkedTags(route: CollectedRoute): readonly string[] {
    const tags = route.schema.tags ?? [];
    const unknown = tags.filter((tag) => !TAGS.some((declared) => declared.name === tag));
    if (unknown.length > 0) throw new Error(`${route.method.toUpperCase()} ${route.url}: tag ${unknown.join(', ')} is not declared in openapi-document.ts TAGS`);
    return tags;
  }

  private parameters(schema: unknown, where: 'path' | 'query'): Array<Record<string, unknown>> {
    if (schema === undefined || schema === null) return [];
    const { properties = {}, required = [] } = schema as { properties?: Record<string, Schema>; required?: string[] };
    return Object.entries(properties).map(([name, property]) => ({ name, in: where, required: where === 'path' || required.includes(name), schema: property }));
  }
}
