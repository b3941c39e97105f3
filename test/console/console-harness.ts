import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/test-app.js';
import { PASSWORD } from '../admin/admin-harness.js';

/** A browser-like console session: the session cookie and the CSRF token its pages carry. */
export interface ConsoleSession {
  readonly cookie: string;
  readonly csrf: string;
}

export const form = (fields: Record<string, string | number>): string => new URLSearchParams(Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)])).toString();

/**
 * The forms posted before there is a session, with the page that shows each; each page sets its
 * own anti-forgery cookie (src/http/auth/form-token.ts).
 */
const SESSIONLESS_FORMS: ReadonlyMap<string, string> = new Map([
  ['/console/login', '/console/login'],
  ['/console/invite', '/console/invite'],
  ['/console/invite/open', '/console/invite'],
]);

/** Opens a session-less form's page as a browser does: its form-token cookie and hidden field. */
export async function openForm(t: TestApp, url: string, headers: Record<string, string> = {}): Promise<ConsoleSession> {
  const page = await t.app.inject({ method: 'GET', url, headers });
  const setCookie = ([] as string[]).concat(page.headers['set-cookie'] ?? []);
  const cookie = setCookie.map((c) => c.split(';', 1)[0] ?? '').find((c) => /^vl_\w+_form=/.test(c));
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (cookie === undefined || csrf === undefined) throw new Error(`no form token on ${url}: ${page.statusCode}`);
  return { cookie, csrf };
}

/**
 * Posts a form as a browser does (urlencoded), with the session's cookie and, unless told
 * otherwise, its CSRF field. The login and invite forms, posted without a session, first open
 * their page for its form token, as a browser would have.
 */
export async function post(t: TestApp, url: string, fields: Record<string, string | number>, session?: ConsoleSession, options: { csrf?: boolean; headers?: Record<string, string> } = {}): Promise<LightMyRequestResponse> {
  const formPage = SESSIONLESS_FORMS.get(url);
  if (!session && options.csrf !== false && formPage !== undefined) session = await openForm(t, formPage, options.headers);
  const withCsrf = session && options.csrf !== false ? { ...fields, _csrf: session.csrf } : fields;
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(session ? { cookie: session.cookie } : {}), ...options.headers },
    payload: form(withCsrf),
  });
}

export function get(t: TestApp, url: string, session?: ConsoleSession): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url, headers: session ? { cookie: session.cookie } : {} });
}

/** Logs in through the console's login form and reads the CSRF token from the page it leads to. */
export async function consoleLogin(t: TestApp, username: string, password = PASSWORD): Promise<ConsoleSession> {
  const res = await post(t, '/console/login', { username, password });
  if (res.statusCode !== 303) throw new Error(`console login of ${username} failed: ${res.statusCode} ${res.body}`);
  const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).map((c) => c.split(';', 1)[0] ?? '').find((c) => !/^vl_\w+_form=/.test(c)) ?? '';
  const landing = await get(t, String(res.headers.location), { cookie, csrf: '' });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(landing.body)?.[1];
  if (csrf === undefined) throw new Error(`no CSRF field on ${String(res.headers.location)}: ${landing.body.slice(0, 500)}`);
  return { cookie, csrf };
}
