/**
 * The request target as the routes must read it. RFC 9112 section 3.2.2 requires a server to
 * accept the absolute form (`GET http://host/api/json.aspx/... HTTP/1.1`), which proxies and some
 * clients send; Fastify's router already matches it on its path, so code that reads the raw URL
 * must strip the scheme and authority the same way (issue 17 item 9).
 */

/** `http://` or `https://` and the authority, as find-my-way recognises an absolute-form target. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)/i;

/** The origin form of a raw request target: the path and query, the scheme and authority removed. */
export function originForm(rawUrl: string): string {
  // The common case costs one character comparison.
  if (rawUrl.charCodeAt(0) === 47) return rawUrl;
  const match = ABSOLUTE_FORM.exec(rawUrl);
  if (!match) return rawUrl;
  const rest = rawUrl.slice(match[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** The authority of an absolute-form target (which then replaces the Host header), else undefined. */
export function targetAuthority(rawUrl: string): string | undefined {
  if (rawUrl.charCodeAt(0) === 47) return undefined;
  return ABSOLUTE_FORM.exec(rawUrl)?.[1];
}
