/**
 * Raw HTTP requests of one lookup on each of the five bindings (SOAP 1.1, SOAP 1.2, HTTP GET,
 * HTTP POST, JSON), as bytes for a raw socket (raw-http.ts): the hostile-input suites send them
 * whole, cut, mutated or followed by garbage.
 */

export type Binding = 'soap11' | 'soap12' | 'get' | 'post' | 'json';
export const BINDINGS: readonly Binding[] = ['soap11', 'soap12', 'get', 'post', 'json'];

/** The ledger's `interface` of each binding. */
export const LEDGER_INTERFACE: Readonly<Record<Binding, string>> = { soap11: 'soap11', soap12: 'soap12', get: 'http-get', post: 'http-post', json: 'json' };

/** A lookup on reg.asmx: its operation, its parameters (without username) and its JSON path after json.aspx/. */
export interface Lookup {
  readonly op: string;
  readonly params: Readonly<Record<string, string>>;
  readonly json: string;
}

export interface RequestOptions {
  readonly username: string;
  /** The JSON interface's Authorization header value (HTTP Basic). */
  readonly auth: string;
  /** Header lines added after Host, each ending in CRLF. */
  readonly headers?: string;
}

/** The whole request (headers and body), HTTP/1.1, keep-alive. */
export function lookupRequest(binding: Binding, lookup: Lookup, options: RequestOptions): string {
  const common = `Host: 127.0.0.1\r\n${options.headers ?? ''}`;
  const form = new URLSearchParams({ ...lookup.params, username: options.username }).toString();
  switch (binding) {
    case 'json':
      return `GET /api/json.aspx/${lookup.json} HTTP/1.1\r\n${common}Authorization: ${options.auth}\r\n\r\n`;
    case 'get':
      return `GET /api/reg.asmx/${lookup.op}?${form} HTTP/1.1\r\n${common}\r\n`;
    case 'post':
      return `POST /api/reg.asmx/${lookup.op} HTTP/1.1\r\n${common}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`;
    case 'soap11':
    case 'soap12': {
      const ns = binding === 'soap11' ? 'http://schemas.xmlsoap.org/soap/envelope/' : 'http://www.w3.org/2003/05/soap-envelope';
      const params = Object.entries({ ...lookup.params, username: options.username })
        .map(([k, v]) => `<${k}>${v}</${k}>`)
        .join('');
      const body = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}"><soap:Body><${lookup.op} xmlns="http://regcheck.org.uk">${params}</${lookup.op}></soap:Body></soap:Envelope>`;
      const type =
        binding === 'soap11'
          ? `Content-Type: text/xml; charset=utf-8\r\nSOAPAction: "http://regcheck.org.uk/${lookup.op}"\r\n`
          : `Content-Type: application/soap+xml; charset=utf-8; action="http://regcheck.org.uk/${lookup.op}"\r\n`;
      return `POST /api/reg.asmx HTTP/1.1\r\n${common}${type}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    }
  }
}
