import { readFileSync } from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import type { Catalogue } from '../../catalogue/catalogue.js';
import { renderOpenApi } from './openapi.js';

export interface OpenApiPluginOptions {
  /** The operations the document describes. */
  readonly catalogue: Catalogue;
}

/** Where the JSON interface's OpenAPI document and its page are served (README "JSON interface"). */
export const OPENAPI_PATHS = {
  document: '/openapi/lookup.json',
  page: '/openapi/lookup',
  script: '/openapi/assets/api-docs.js',
  style: '/openapi/assets/api-docs.css',
} as const;

const asset = (name: string): string => readFileSync(new URL(`./openapi-page/${name}`, import.meta.url), 'utf8');

/**
 * The page loads only its own script and style from this origin and talks only to it: no inline
 * code, no CDN, so it works offline and under this policy.
 */
const PAGE_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function renderPage(): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>JSON interface</title>
<link rel="stylesheet" href="${OPENAPI_PATHS.style}">
<script src="${OPENAPI_PATHS.script}" defer></script>
</head>
<body>
<main id="api-docs" data-openapi="${OPENAPI_PATHS.document}">
<p>Loading the API description from <a href="${OPENAPI_PATHS.document}">${OPENAPI_PATHS.document}</a>; this page needs JavaScript.</p>
</main>
</body>
</html>
`;
}

/**
 * The OpenAPI document of the JSON interface (generated from the catalogue once, like the WSDL)
 * and an interactive page for it. Free pages: no authentication, nothing charged.
 */
export const openApiPlugin: FastifyPluginAsync<OpenApiPluginOptions> = (app, options) => {
  const document = renderOpenApi(options.catalogue);
  const page = renderPage();
  const script = asset('api-docs.js');
  const style = asset('api-docs.css');

  app.get(OPENAPI_PATHS.document, (_request, reply) => reply.type('application/json; charset=utf-8').send(document));
  app.get(OPENAPI_PATHS.page, (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', PAGE_POLICY).header('x-content-type-options', 'nosniff').send(page),
  );
  app.get(OPENAPI_PATHS.script, (_request, reply) => reply.type('text/javascript; charset=utf-8').header('x-content-type-options', 'nosniff').send(script));
  app.get(OPENAPI_PATHS.style, (_request, reply) => reply.type('text/css; charset=utf-8').header('x-content-type-options', 'nosniff').send(style));
  return Promise.resolve();
};
