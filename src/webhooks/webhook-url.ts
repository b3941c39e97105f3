import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Which webhook URLs are acceptable. Only http: and https:, no credentials in the URL. Unless the
 * operator allows it (WEBHOOK_ALLOW_PRIVATE_URLS), no address that is not on the public internet:
 * a customer registering `http://127.0.0.1:6379/` or a cloud metadata address would otherwise
 * make the server send requests inside its own network (server-side request forgery). The check
 * is made when the endpoint is registered (literal addresses and `localhost`) and again on every
 * connection, on the address DNS actually returned (privateAddressGuard), so a name that later
 * resolves to a private address (DNS rebinding) is refused too.
 */

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv6');
}

/** True for loopback, private, link-local, carrier-grade NAT, multicast and reserved addresses. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family === 6) {
    const mapped = ipv4Mapped(address);
    if (mapped !== undefined) return PRIVATE.check(mapped, 'ipv4');
    return PRIVATE.check(address, 'ipv6');
  }
  return false;
}

/**
 * The IPv4 address of an IPv4-mapped IPv6 address, in either spelling: `::ffff:127.0.0.1`, or
 * `::ffff:7f00:1` as the WHATWG URL parser writes it (`new URL('http://[::ffff:127.0.0.1]/')`).
 */
function ipv4Mapped(address: string): string | undefined {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted?.[1] !== undefined) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex?.[1] === undefined || hex[2] === undefined) return undefined;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * A host name as DNS resolves it: without the brackets of an IPv6 literal and without trailing
 * dots (`localhost.` is the fully qualified spelling of `localhost`, and resolves the same). The
 * URL parser has already lower-cased it and turned every IPv4 spelling (`0x7f.1`, `127.1`) into
 * dotted decimal.
 */
function canonicalHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
}

/**
 * The form of an acceptable webhook URL that is stored and used: the WHATWG serialisation
 * (`new URL(url).href`), so what is stored is exactly what is requested, with no tab or newline
 * the parser would have dropped.
 */
export function normaliseWebhookUrl(url: string): string {
  return new URL(url).href;
}

/** Why `url` cannot be a webhook endpoint, or undefined when it can. */
export function webhookUrlProblem(url: string, allowPrivate: boolean): string | undefined {
  if (url.length > 2048) return 'url must be at most 2048 characters';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'url must use http or https';
  if (parsed.username !== '' || parsed.password !== '') return 'url must not contain credentials';
  if (allowPrivate) return undefined;
  const host = canonicalHost(parsed.hostname);
  if (host === 'localhost' || host.endsWith('.localhost') || isPrivateAddress(host)) {
    return 'url must point to a public address (the operator can allow private ones with WEBHOOK_ALLOW_PRIVATE_URLS)';
  }
  return undefined;
}

/** A DNS lookup for http.request that refuses private addresses (the connection then fails). */
export const privateAddressGuard: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      callback(error, '', 0);
      return;
    }
    const list = addresses;
    const refused = list.find((a) => isPrivateAddress(a.address));
    const first = list[0];
    if (refused || !first) {
      callback(Object.assign(new Error(`${hostname} resolves to a private address (${refused?.address ?? 'none'})`), { code: 'EPRIVATEADDRESS' }), '', 0);
      return;
    }
    if (options.all === true) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    else callback(null, first.address, first.family);
  });
};
