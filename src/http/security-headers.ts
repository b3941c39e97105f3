import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Scripts and styles only from our own origin (no inline script or style attribute can run),
 * forms only to ourselves, never framed. Charts are inline SVG with presentation attributes,
 * which CSP does not treat as inline style.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * Security headers for console and front-page HTML only; the SOAP, GET/POST and JSON answers keep
 * their wire-compatible headers. Pages behind a login are never cached; the access-control header
 * the app adds to every answer (for the JSON interface) has no purpose on a page.
 */
export function securePage(request: FastifyRequest, reply: FastifyReply, options: { cache: 'private' | 'public' }): void {
  void reply
    .removeHeader('access-control-allow-origin')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('permissions-policy', 'camera=(), microphone=(), geolocation=()');
  // A route that chose its own caching (the content-hashed assets) keeps it.
  if (!reply.hasHeader('cache-control')) void reply.header('cache-control', options.cache === 'private' ? 'no-store' : 'public, max-age=300');
  // HSTS only where the browser really came over TLS (directly or through a trusted proxy).
  if (request.protocol === 'https') void reply.header('strict-transport-security', 'max-age=31536000');
}
