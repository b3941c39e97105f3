import type { FastifyRequest } from 'fastify';

/**
 * The public base URL for absolute links: BASE_URL when configured, else the request's own
 * scheme and host (as the original built ImageUrl and WSDL addresses from the request).
 */
export function baseUrlOf(request: FastifyRequest, configured: string | undefined): string {
  if (configured !== undefined) return configured;
  const host = request.host;
  // A Host header that is not a plain host[:port] must not end up inside links we hand out.
  const safeHost = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) ? host : 'localhost';
  return `${request.protocol}://${safeHost}`;
}
