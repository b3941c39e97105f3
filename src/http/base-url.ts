import type { FastifyRequest } from 'fastify';
import { BoundedMemo } from '../shared/bounded-memo.js';
import { targetAuthority } from './request-target.js';

/**
 * A Host (or absolute-form authority, or trusted X-Forwarded-Host) that is not a valid
 * `host[:port]`. A client error: each interface answers it with a 400 in its own form.
 */
export class InvalidHostError extends Error {
  override readonly name = 'InvalidHostError';
  readonly statusCode = 400;
  readonly code = 'INVALID_HOST';
  constructor() {
    super('The Host header is not a valid host name or address with an optional port');
  }
}

/** A reg-name, IPv4 or bracketed IPv6 literal, with an optional port: nothing else may reach a link. */
const HOST_SHAPE = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * Whether a host can stand in an absolute URL. The shape alone let through `999.1.1.1`, `a:99999`
 * and `127.-1.0.1`, which the WHATWG URL parser rejects (IPv4 parts over 255, a port over 65535, a
 * numeric name with a non-numeric part): the help page then crashed on `new URL(address)` and the
 * same hosts went into WSDL addresses and ImageUrl (issue 17 item 8). The parser is the judge.
 */
function isValidHost(host: string): boolean {
  if (!HOST_SHAPE.test(host)) return false;
  try {
    new URL(`http://${host}/`);
    return true;
  } catch {
    return false;
  }
}

/** Clients send the same few hosts again and again; parsing each once is enough. */
const validHosts = new BoundedMemo(isValidHost, 256, 300);

/** The host the client addressed: a trusted proxy's, else the absolute-form target's, else Host. */
function hostOf(request: FastifyRequest): string {
  const host = request.host;
  // request.host differs from the Host header only when it came from a trusted X-Forwarded-Host.
  if (host !== (request.headers.host ?? '')) return host;
  return targetAuthority(request.raw.url ?? '') ?? host;
}

/**
 * The public base URL for absolute links: BASE_URL when configured, else the request's own
 * scheme and host (as the original built ImageUrl and WSDL addresses from the request). This is
 * the one place the host is validated: an invalid one throws InvalidHostError.
 */
export function baseUrlOf(request: FastifyRequest, configured: string | undefined): string {
  if (configured !== undefined) return configured;
  const host = hostOf(request);
  // HTTP/1.0 allows a request without Host (HTTP/1.1 requires it, and Node refuses one without).
  if (host === '') return `${request.protocol}://localhost`;
  if (!validHosts.get(host)) throw new InvalidHostError();
  return `${request.protocol}://${host}`;
}
