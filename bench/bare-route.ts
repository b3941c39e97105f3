/**
 * The baseline of `npm run bench:json` and `npm run bench:soap`: a bare Fastify server that answers
 * `BARE_METHOD BARE_PATH` with a fixed body, no auth, no parsing, no storage, no hooks. The
 * benchmark hands it the exact bytes and content type the real service answered, so the two runs
 * differ only in the work the service does.
 *
 * A POST body is read as a buffer and ignored, as the service's SOAP plugin reads every body as a
 * buffer before parsing it (Fastify has no parser for text/xml; without one it answers 415).
 *
 * Environment (all set by the benchmark):
 * - BARE_HOST, BARE_PORT: where to listen.
 * - BARE_METHOD: GET or POST.
 * - BARE_PATH: the route, e.g. /api/json.aspx/CheckFrance/FK482TR or /api/reg.asmx.
 * - BARE_BODY_FILE: file holding the response body.
 * - BARE_CONTENT_TYPE: the content-type header to send.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { requestLoggerFactory } from '../src/http/request-logger.js';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const host = required('BARE_HOST');
  const port = Number(required('BARE_PORT'));
  const method = required('BARE_METHOD');
  if (method !== 'GET' && method !== 'POST') throw new Error(`BARE_METHOD must be GET or POST (got "${method}")`);
  const path = required('BARE_PATH');
  const contentType = required('BARE_CONTENT_TYPE');
  // Sent as a string, as the service sends the answers it keeps (src/lookup/result-memo.ts).
  const body = readFileSync(required('BARE_BODY_FILE'), 'utf8');

  // Same logger setup as the service at LOG_LEVEL=warn, request loggers included (made only when
  // a request writes a line, src/http/request-logger.ts): neither side writes a line per request.
  const app = Fastify({ logger: { level: 'warn' }, childLoggerFactory: requestLoggerFactory, bodyLimit: 1024 * 1024 });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, raw, done) => {
    done(null, raw);
  });
  app.route({ method, url: path, handler: (_request, reply) => reply.type(contentType).send(body) });

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
  console.error('bare-route failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
