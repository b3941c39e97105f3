import type { FastifyPluginAsync } from 'fastify';
import { baseUrlOf } from '../../base-url.js';
import { originForm } from '../../request-target.js';
import type { ServiceEndpoint } from '../service-endpoints.js';
import { renderOperationPage, renderServicePage } from './help-page.js';
import { generateDisco, generateWsdl } from './wsdl-generator.js';

export interface WsdlPluginOptions {
  readonly endpoints: readonly ServiceEndpoint[];
  readonly baseUrl: string | undefined;
}

/** The query keys of a raw URL, as ASMX reads `?WSDL` and `?disco`: names without values, any case. */
function queryKeys(rawUrl: string): { keys: Set<string>; op: string | undefined } {
  const query = new URLSearchParams(rawUrl.split('?').slice(1).join('?'));
  const keys = new Set<string>();
  let op: string | undefined;
  for (const [k, v] of query) {
    keys.add(k.toLowerCase());
    if (k.toLowerCase() === 'op' && op === undefined) op = v;
  }
  return { keys, op };
}

/** `GET /api/{service}.asmx`: `?WSDL`, `?disco`, the help page, and `?op=` operation pages. */
export const wsdlPlugin: FastifyPluginAsync<WsdlPluginOptions> = (app, options) => {
  for (const endpoint of options.endpoints) {
    app.get(endpoint.definition.path, (request, reply) => {
      const address = `${baseUrlOf(request, options.baseUrl)}${endpoint.definition.path}`;
      const { keys, op } = queryKeys(originForm(request.raw.url ?? ''));
      if (keys.has('wsdl')) return reply.type('text/xml; charset=utf-8').send(generateWsdl(endpoint, address));
      if (keys.has('disco')) return reply.type('text/xml; charset=utf-8').send(generateDisco(endpoint, address));
      if (op !== undefined) {
        const found = endpoint.find(op);
        if (!found) {
          return reply.code(404).type('text/html; charset=utf-8').send(renderServicePage(endpoint, address, `No operation named ${op}.`));
        }
        return reply.type('text/html; charset=utf-8').send(renderOperationPage(endpoint, found, address));
      }
      return reply.type('text/html; charset=utf-8').send(renderServicePage(endpoint, address));
    });
  }
  return Promise.resolve();
};
