import { isAscii } from 'node:buffer';
import { gunzipSync, inflateSync } from 'node:zlib';
import { BoundedMemo } from '../../shared/bounded-memo.js';

/** Why a request body cannot be read; `status` is the HTTP status to answer with. */
export class RequestBodyError extends Error {
  override readonly name = 'RequestBodyError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface MediaType {
  /** Lower-cased `type/subtype`. */
  readonly type: string;
  /** Parameters with lower-cased names; values unquoted. */
  readonly parameters: ReadonlyMap<string, string>;
}

/** Parsed Content-Type values: clients send one or two. */
const parsedMediaTypes = new BoundedMemo((header: string) => parseMediaTypeNow(header), 256, 256);

/**
 * Parses a Content-Type header value such as `application/soap+xml; charset=utf-8; action="..."`.
 * The answer is shared between requests with the same header: read it, never change it.
 */
export function parseMediaType(header: string | undefined): MediaType {
  return parsedMediaTypes.get(header ?? '');
}

function parseMediaTypeNow(header: string): MediaType {
  const [type = '', ...rest] = header.split(';');
  const parameters = new Map<string, string>();
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (!parameters.has(name)) parameters.set(name, value);
  }
  return { type: type.trim().toLowerCase(), parameters };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Turns a raw request body into text: inflates gzip/deflate with the same size bound as plain
 * bodies, accepts UTF-8 (and its ASCII subset) only, and refuses invalid byte sequences rather than
 * guessing.
 */
export function decodeBody(body: Buffer, contentEncoding: string | undefined, charset: string | undefined, limit: number): string {
  let bytes = body;
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate') {
    try {
      bytes = encoding === 'deflate' ? inflateSync(body, { maxOutputLength: limit }) : gunzipSync(body, { maxOutputLength: limit });
    } catch (error) {
      if (error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new RequestBodyError(413, `The request body inflates to more than ${limit} bytes`);
      }
      throw new RequestBodyError(400, `The request body is not valid ${encoding} data`);
    }
  } else if (encoding !== 'identity' && encoding !== '') {
    throw new RequestBodyError(415, `Content-Encoding ${encoding} is not supported; send identity, gzip or deflate`);
  }
  const cs = (charset ?? 'utf-8').toLowerCase();
  if (cs !== 'utf-8' && cs !== 'utf8' && cs !== 'us-ascii') {
    throw new RequestBodyError(415, `charset ${cs} is not supported; send utf-8`);
  }
  // ASCII (what clients nearly always send) is valid UTF-8 as it is: no decoder needed.
  if (isAscii(bytes)) return bytes.toString('latin1');
  try {
    return utf8.decode(bytes);
  } catch {
    throw new RequestBodyError(400, 'The request body is not valid UTF-8');
  }
}
