import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A static file of the console, served under a content-hashed path so it can be cached for a year. */
export interface Asset {
  readonly path: string;
  readonly type: string;
  readonly body: Buffer;
}

/** Where the assets are served (console.plugin.ts registers assets.routes.ts under it). */
export const ASSETS_PREFIX = '/console/assets';

function asset(file: string, type: string): Asset {
  const body = readFileSync(new URL(`./assets/${file}`, import.meta.url));
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `${ASSETS_PREFIX}/${hash}/${file}`, type, body };
}

/** Read once at start-up: a changed file gets a new URL, so `immutable` caching is safe. */
export const ASSETS = {
  css: asset('console.css', 'text/css; charset=utf-8'),
  js: asset('console.js', 'text/javascript; charset=utf-8'),
  icon: asset('favicon.svg', 'image/svg+xml'),
} as const;

/** The service's version, as package.json says (shown on the front page). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
