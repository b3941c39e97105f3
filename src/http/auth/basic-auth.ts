import type { BasicCredentials } from '../../lookup/lookup-request.js';

/** Parses `Authorization: Basic base64(username:apiKey)`; undefined when absent or malformed. */
export function parseBasicAuth(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { username: decoded.slice(0, colon), apiKey: decoded.slice(colon + 1) };
}
