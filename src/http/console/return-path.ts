/**
 * Where the console sends a user after logging in (issue 26 item 12): the page asked for while
 * logged out. The target travels through the login form in a query parameter and a hidden field,
 * so it is text an attacker can choose; only a path of this site's console may come out of it,
 * never another site (an open redirect, OWASP "Unvalidated Redirects and Forwards").
 */

/** The query parameter and form field that carry the return target. */
export const NEXT_FIELD = 'next';

/** Longest return target kept (a deep link with a ledger filter fits easily). */
export const MAX_RETURN_PATH = 1024;

/** Pages that are no place to return to: the login itself and the ways out. */
const NOT_A_TARGET = new Set(['/console/login', '/console/logout', '/console/logout-everywhere']);

/**
 * `value` as a console path to redirect to (path and query, normalised), or undefined when it is
 * anything else: an absolute URL (`https://evil.example/`), a scheme-relative one (`//evil`), a
 * backslash (browsers read `/\evil` as `//evil`), a control character or space (browsers drop tabs
 * and newlines, so `/\t/evil` becomes `//evil`), a path outside `/console`, or one that leaves it
 * through dot segments once normalised (`/console/../admin`).
 */
export function safeReturnPath(value: string | undefined): string | undefined {
  if (value === undefined || value.length === 0 || value.length > MAX_RETURN_PATH) return undefined;
  // Printable ASCII only (a browser percent-encodes everything else in the address it sends), no backslash.
  if (!/^[\x21-\x7e]+$/.test(value) || value.includes('\\')) return undefined;
  if (!value.startsWith('/') || value.startsWith('//')) return undefined;
  let url: URL;
  try {
    url = new URL(value, 'http://console.invalid');
  } catch {
    return undefined;
  }
  if (url.origin !== 'http://console.invalid') return undefined;
  const path = url.pathname;
  if (path !== '/console' && !path.startsWith('/console/')) return undefined;
  if (path.startsWith('//') || NOT_A_TARGET.has(path)) return undefined;
  return `${path}${url.search}`;
}

/** The login page's address, with why the session ended and the page to return to, when known. */
export function loginPath(options: { reason?: 'ended' | 'expired' | undefined; next?: string | undefined } = {}): string {
  const query = new URLSearchParams();
  if (options.reason !== undefined) query.set('session', options.reason);
  const next = safeReturnPath(options.next);
  if (next !== undefined) query.set(NEXT_FIELD, next);
  const text = query.toString();
  return text === '' ? '/console/login' : `/console/login?${text}`;
}

/** `path` with `?next=` the return target, when `next` is a safe one (the password page passes it on). */
export function withNext(path: string, next: string | undefined): string {
  const target = safeReturnPath(next);
  return target === undefined ? path : `${path}?${new URLSearchParams({ [NEXT_FIELD]: target }).toString()}`;
}
