import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { ASSETS } from '../../console/console-assets.js';

/** The page's script and style, files of this folder, served beside each page. */
export const DOCS_ASSETS = {
  script: { name: 'api-docs.js', type: 'text/javascript; charset=utf-8' },
  style: { name: 'api-docs.css', type: 'text/css; charset=utf-8' },
} as const;

/**
 * The page loads only its own script and style from this origin and talks only to it: no inline
 * code and no CDN, so it works where the Internet is out of reach, under this policy.
 */
export const DOCS_PAGE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** One documentation page: what it shows and where it and its assets are. */
export interface DocsPageOptions {
  /** The page's title until the document is loaded (the script then shows the document's own). */
  readonly title: string;
  /** The OpenAPI document's URL, as the browser asks for it. */
  readonly documentUrl: string;
  /** The page's route in the scope it is registered in (`/openapi/lookup`, `/docs` under /admin/api). */
  readonly route: string;
  /** The page's URL as the browser asks for it (the header marks its link as the current page). */
  readonly pageUrl: string;
  /** The folder route of its assets in that scope; `assetUrl` is the same folder as the browser asks for it. */
  readonly assetRoute: string;
  readonly assetUrl: string;
  /** Route config of the page and its assets (the admin API marks them public). */
  readonly config?: Record<string, unknown>;
}

const text = (name: string): string => readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');
/** Read once, on first use, shared by every page. */
let assets: Record<keyof typeof DOCS_ASSETS, string> | undefined;

/** Only this service's own fixed strings go in; escaped anyway, as they land in HTML. */
function escape(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The site's header, as the front page and the console have it (src/http/console/layout.ts): the
 * name leads back to the front page, then the console and both documentation pages.
 */
export const DOCS_SITE_LINKS: ReadonlyArray<readonly [href: string, label: string]> = [
  ['/console', 'Console'],
  ['/openapi/lookup', 'JSON interface'],
  ['/admin/api/docs', 'Admin and account API'],
];

function siteHeader(pageUrl: string): string {
  const links = DOCS_SITE_LINKS.map(([href, label]) => `<li><a href="${escape(href)}"${href === pageUrl ? ' aria-current="page"' : ''}>${escape(label)}</a></li>`).join('');
  return `<header class="top"><a class="brand" href="/">vehicle-lookup</a><nav aria-label="Site"><ul>${links}</ul></nav></header>`;
}

/**
 * The page's HTML: the site's header and a shell the script fills from the document at
 * `documentUrl` (its own h1, then h2 per tag and h3 within an operation: no level skipped).
 */
export function docsPageHtml(options: Pick<DocsPageOptions, 'title' | 'documentUrl' | 'assetUrl' | 'pageUrl'>): string {
  const url = escape(options.documentUrl);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(options.title)}</title>
<link rel="icon" type="image/svg+xml" href="${escape(ASSETS.icon.path)}">
<link rel="stylesheet" href="${escape(options.assetUrl)}/${DOCS_ASSETS.style.name}">
<script src="${escape(options.assetUrl)}/${DOCS_ASSETS.script.name}" defer></script>
</head>
<body>
<a class="skip" href="#api-docs">Skip to content</a>
${siteHeader(options.pageUrl)}
<main id="api-docs" data-openapi="${url}">
<h1>${escape(options.title)}</h1>
<p>Loading the API description from <a href="${url}">${url}</a>; this page needs JavaScript.</p>
</main>
</body>
</html>
`;
}

/**
 * Serves an interactive documentation page of an OpenAPI document, with its script and style, in
 * `app`'s scope: the same page for the JSON interface's document (src/http/lookup/json/openapi.plugin.ts)
 * and the admin and account APIs' (src/http/api/admin-api.plugin.ts). The script lists every
 * operation by tag with its parameters, body and answers, and sends GET requests from a form: with
 * HTTP Basic credentials typed in when the document uses them, else with the browser's own
 * session cookie (same origin only). It never sends a write.
 */
export function registerDocsPage(app: FastifyInstance, options: DocsPageOptions): void {
  assets ??= { script: text(DOCS_ASSETS.script.name), style: text(DOCS_ASSETS.style.name) };
  const loaded = assets;
  const page = docsPageHtml(options);
  const config = options.config ?? {};
  app.get(options.route, { config }, (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', DOCS_PAGE_POLICY).header('x-content-type-options', 'nosniff').send(page),
  );
  for (const asset of ['script', 'style'] as const) {
    app.get(`${options.assetRoute}/${DOCS_ASSETS[asset].name}`, { config }, (_request, reply) =>
      reply.type(DOCS_ASSETS[asset].type).header('x-content-type-options', 'nosniff').send(loaded[asset]),
    );
  }
}
