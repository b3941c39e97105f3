import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { errorResponse, type Schema } from './api-schemas.js';

/** A route as the document needs it. */
interface CollectedRoute {
  readonly method: string;
  readonly url: string;
  readonly schema: FastifySchema & Record<string, unknown>;
  readonly public: boolean;
}

/** What each error status means, in the words of the admin and account APIs. */
const ERRORS: Readonly<Record<number, string>> = {
  400: 'Invalid input: the field is named',
  401: 'Not logged in, or an unknown or revoked token (login: a wrong name or password)',
  403: 'The role, token scope or CSRF token does not allow this',
  404: 'No such account, key, user, token, import, webhook endpoint or route',
  409: 'The name is taken, or the account has fewer credits than asked for',
  413: 'The body is larger than the limit (IMPORT_MAX_BYTES)',
  415: 'The body is not in one of the accepted media types',
  429: 'Too many requests or failed logins (Retry-After)',
};

const SUCCESS: Readonly<Record<number, string>> = { 200: 'Done', 201: 'Created', 202: 'Accepted', 204: 'Done; no content' };

/**
 * The statuses a route can answer besides its success, from its schema and options: 400 when it
 * has any input, 401 and 403 unless it is public, 404 when its path names a thing, 413 and 415
 * when it streams its body, 429 always (every request of both APIs counts against a rate limit),
 * and whatever it declares in `errorStatuses` (409 for a create that can collide, 401 for login...).
 */
export function errorStatuses(route: { url: string; schema: FastifySchema; public: boolean }): number[] {
  const { schema } = route;
  const named = (part: unknown): boolean => Object.keys((part as { properties?: object } | undefined)?.properties ?? {}).length > 0;
  const input = schema.body !== undefined || schema.consumes !== undefined || named(schema.params) || named(schema.querystring);
  const statuses = new Set<number>([429, ...(schema.errorStatuses ?? [])]);
  if (input) statuses.add(400);
  if (!route.public) [401, 403].forEach((status) => statuses.add(status));
  if (route.url.includes(':')) statuses.add(404);
  if (schema.consumes !== undefined) [413, 415].forEach((status) => statuses.add(status));
  return [...statuses].sort((a, b) => a - b);
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
      const success = route.schema.successStatus ?? 200;
      const media = path.endsWith('.csv') ? 'text/csv' : 'application/json';
      const responses: Record<string, unknown> = {
        [String(success)]: { description: SUCCESS[success] ?? 'Done', ...(success === 204 ? {} : { content: { [media]: { schema: media === 'text/csv' ? { type: 'string' } : { type: 'object' } } } }) },
      };
      for (const status of errorStatuses(route)) {
        responses[String(status)] = { description: ERRORS[status] ?? 'Refused', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
      }
      // A body read as a stream by the route: any bytes, in one of its media types.
      const streamed = consumes === undefined ? undefined : { required: true, content: Object.fromEntries(consumes.map((type) => [type, { schema: { type: 'string' } }])) };
      paths[path] = {
        ...paths[path],
        [route.method]: {
          operationId: `${route.method}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
          ...(route.schema.summary !== undefined ? { summary: route.schema.summary } : {}),
          ...(route.schema.tags !== undefined ? { tags: route.schema.tags } : {}),
          ...(parameters.length > 0 ? { parameters } : {}),
          ...(body !== undefined ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
          ...(streamed !== undefined ? { requestBody: streamed } : {}),
          responses,
          security: route.public ? [] : path.startsWith('/admin/') ? [{ session: [], csrf: [] }, { operatorToken: [] }] : [{ session: [], csrf: [] }],
        },
      };
    }
    return {
      openapi: '3.1.0',
      info: {
        title: 'vehicle-lookup admin and account API',
        version: '1',
        description: 'Operators under /admin/api, customers under /account/api (their own account only). Writes with a session cookie send its CSRF token in X-CSRF-Token.',
      },
      paths,
      components: {
        schemas: { Error: errorResponse },
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: 'vl_session', description: 'Set by POST .../login' },
          csrf: { type: 'apiKey', in: 'header', name: 'X-CSRF-Token', description: 'The csrfToken answered by login; required on writes with the cookie' },
          operatorToken: { type: 'http', scheme: 'bearer', description: 'An operator API token (admin API only)' },
        },
      },
    };
  }

  private parameters(schema: unknown, where: 'path' | 'query'): Array<Record<string, unknown>> {
    if (schema === undefined || schema === null) return [];
    const { properties = {}, required = [] } = schema as { properties?: Record<string, Schema>; required?: string[] };
    return Object.entries(properties).map(([name, property]) => ({ name, in: where, required: where === 'path' || required.includes(name), schema: property }));
  }
}
