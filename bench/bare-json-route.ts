/**
 * The baseline of `npm run bench:json`: a bare Fastify server that answers `GET BARE_PATH` with a
 * fixed body, no auth, no storage, no hooks. The benchmark hands it the exact bytes and content
 * type the real service answered, so the two runs differ only in the work the service does.
 *
 * Environment (all set by bench/json-lookup.bench.ts):
 * - BARE_HOST, BARE_PORT: where to listen.
 * - BARE_PATH: the route, e.g. /api/json.aspx/CheckFrance/FK482TR.
 * - BARE_BODY_FILE: file holding the response body (UTF-8 JSON).
 * - BARE_CONTENT_TYPE: the content-type header to send.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const host = required('BARE_HOST');
  const port = Number(required('BARE_PORT'));
  const path = required('BARE_PATH');
  const contentType = required('BARE_CONTENT_TYPE');
  // Sent as a string, as the JSON plugin sends JSON.stringify's result.
  const body = readFileSync(required('BARE_BODY_FILE'), 'utf8');

  // Same logger setup as the service at LOG_LEVEL=warn: Fastify still builds a child logger per
  // request, so both sides pay for it, and neither writes a line per request.
  const app = Fastify({ logger: { level: 'warn' } });
  app.get(path, (_request, reply) => reply.type(contentType).send(body));

  const stop = (): void => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  await app.listen({ host, port });
}

main().catch((error: unknown) => {
  console.error('bare-json-route failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
