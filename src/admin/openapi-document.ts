import type { FastifyInstance, RouteOptions } from 'fastify';
import { errorResponse, type Schema } from './api-schemas.js';

/** A route as the document needs it. */
interface CollectedRoute {
  readonly method: string;
  readonly url: string;
  readonly schema: Record<string, unknown>;
  readonly public: boolean;
}

const ERRORS: Record<string, string> = {
  '400': 'Invalid input: the field is named',
  '401': 'Not logged in, or an unknown or revoked token',
  '403': 'The role, token scope or CSRF token does not allow this',
  '404': 'No such account, key, user or route',
  '429': 'Too many requests or failed logins (Retry-After)',
};

/** The further refusals of a route that streams its body (an upload). */
const STREAMED_BODY_ERRORS: Record<string, string> = {
  '413': 'The body is larger than the limit (IMPORT_MAX_BYTES)',
  '415': 'The body is not in one of the accepted media types',
};

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
        this.routes.push({ method: method.toLowerCase(), url: route.url, schema: (route.schema ?? {}) as Record<string, unknown>, public: (route.config as { public?: boolean } | undefined)?.public === true });
      }
    });
  }

  document(): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const route of [...this.routes].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))) {
      const path = route.url.replace(/:([A-Za-z]+)/g, '{$1}');
      const parameters = [...this.parameters(route.schema.params, 'path'), ...this.parameters(route.schema.querystring, 'query')];
      const body = route.schema.body as Schema | undefined;
      const consumes = route.schema.consumes as readonly string[] | undefined;
      const success = String((route.schema.successStatus as number | undefined) ?? 200);
      const responses: Record<string, unknown> = { [success]: { description: success === '202' ? 'Accepted' : 'Done', content: { [path.endsWith('.csv') ? 'text/csv' : 'application/json']: { schema: path.endsWith('.csv') ? { type: 'string' } : { type: 'object' } } } } };
      const errors = consumes === undefined ? ERRORS : { ...ERRORS, ...STREAMED_BODY_ERRORS };
      for (const [status, description] of Object.entries(errors)) {
        if (status === '400' && body === undefined && consumes === undefined && parameters.length === 0) continue;
        responses[status] = { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
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
