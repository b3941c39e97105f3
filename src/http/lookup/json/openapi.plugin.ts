import type { FastifyPluginAsync } from 'fastify';
import type { Catalogue } from '../../../catalogue/catalogue.js';
import { DOCS_ASSETS, registerDocsPage } from '../../site/openapi-docs/openapi-docs-page.js';
import { renderOpenApi } from './openapi-document.js';

export interface OpenApiPluginOptions {
  /** The operations the document describes. */
  readonly catalogue: Catalogue;
}

const ASSET_FOLDER = '/openapi/assets';

/** Where the JSON interface's OpenAPI document and its page are served (docs/interfaces.md "JSON interface"). */
export const OPENAPI_PATHS = {
  document: '/openapi/lookup.json',
  page: '/openapi/lookup',
  script: `${ASSET_FOLDER}/${DOCS_ASSETS.script.name}`,
  style: `${ASSET_FOLDER}/${DOCS_ASSETS.style.name}`,
} as const;

/**
 * The OpenAPI document of the JSON interface (generated from the catalogue once, like the WSDL)
 * and an interactive page for it. Free pages: no authentication, nothing charged.
 */
export const openApiPlugin: FastifyPluginAsync<OpenApiPluginOptions> = (app, options) => {
  const document = renderOpenApi(options.catalogue);
  app.get(OPENAPI_PATHS.document, (_request, reply) => reply.type('application/json; charset=utf-8').send(document));
  // The same page as the admin API's (src/http/site/openapi-docs/); it asks for HTTP Basic credentials
  // because this document's security scheme is HTTP Basic.
  registerDocsPage(app, { title: 'JSON interface', documentUrl: OPENAPI_PATHS.document, route: OPENAPI_PATHS.page, pageUrl: OPENAPI_PATHS.page, assetRoute: ASSET_FOLDER, assetUrl: ASSET_FOLDER });
  return Promise.resolve();
};
