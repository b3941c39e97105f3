import type { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ImportJobError, type ImportJob, type ImportJobs } from '../../datasets/import/import-jobs.js';
import { UploadError } from '../../datasets/import/upload-file.js';
import { actorOf, ApiError, requireWrite, type Principal } from '../auth/api-auth.js';
import { adminAnswers } from './api-responses.js';
import { bool, idParams, int, object, str, type Schema } from './api-schemas.js';

/** The media types a JSON Lines upload may be sent as (docs/import-format.md). */
export const IMPORT_MEDIA_TYPES: readonly string[] = ['application/x-ndjson', 'application/jsonl', 'text/plain'];

/** A source name: what the CLI's --source records with every record. */
export const SOURCE_PATTERN = '^[A-Za-z0-9._-]+$';
export const SOURCE: Schema = str(64, { minLength: 1, pattern: SOURCE_PATTERN });
/** The name shown for the file in the job list. */
export const FILE_NAME: Schema = str(255, { minLength: 1 });
export const DEFAULT_SOURCE = 'import';
export const DEFAULT_FILE_NAME = 'upload.jsonl';

/**
 * The one mapping of the import service's refusals to answers, used by the API and the console
 * (which renders the same status and message as a page).
 */
export function importApiError(error: unknown): unknown {
  if (error instanceof UploadError) {
    if (error.code === 'TOO_LARGE') return new ApiError(413, 'too-large', error.message);
    if (error.code === 'EMPTY') return new ApiError(400, 'empty-file', 'the file is empty: send the JSON Lines file as the request body', 'file');
    return new ApiError(400, 'upload-interrupted', error.message);
  }
  if (error instanceof ImportJobError) {
    return error.code === 'NOT_FOUND' ? new ApiError(404, 'not-found', error.message) : new ApiError(503, 'unavailable', error.message);
  }
  return error;
}

/**
 * A declared body (Content-Length) larger than the file may be, refused before a byte is read;
 * `overhead` allows for what wraps the file (a multipart form's boundaries and fields).
 */
export function refuseDeclaredSize(request: FastifyRequest, maxBytes: number, overhead = 0): void {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes + overhead) throw new ApiError(413, 'too-large', `the file is larger than the limit of ${maxBytes} bytes (IMPORT_MAX_BYTES)`);
}

/** A job's overall progress in percent: the checking pass is the first half when there are two. */
export function percentDone(job: ImportJob): number {
  if (job.state === 'done') return 100;
  const pass = job.fileSize === 0 ? 0 : Math.min(1, job.bytesRead / job.fileSize);
  if (job.state === 'queued') return 0;
  if (job.skipInvalid) return Math.floor(pass * 100);
  return Math.floor(job.state === 'validating' ? pass * 50 : 50 + pass * 50);
}

/** A job as the API answers it; the list leaves out the invalid lines. */
export function describeImport(job: ImportJob, withReport = true): Record<string, unknown> {
  const { invalidLines, ...rest } = job;
  return {
    ...rest,
    percent: percentDone(job),
    ...(withReport ? { invalidLines, invalidLinesOmitted: Math.max(0, job.invalid - invalidLines.length) } : {}),
  };
}

export interface ImportRoutesOptions {
  readonly imports: ImportJobs;
  /** The caller, as the enclosing API authenticated it. */
  readonly principal: (request: FastifyRequest) => Principal;
}

const TAG = 'admin: imports';

/**
 * The admin API's import routes (issue 16), in a scope of their own: the body of an upload is
 * never parsed or buffered. Every content type reaches the handler as the raw request stream, so
 * the caller is authenticated (the enclosing API's preHandler) and its role checked before a byte
 * is read; the handler then refuses other media types (415), a declared size over the limit
 * (413), and streams the rest to a temporary file, refusing it (413) the moment it passes
 * IMPORT_MAX_BYTES.
 */
export const importRoutes: FastifyPluginAsync<ImportRoutesOptions> = (app, options) => {
  const { imports } = options;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => {
    done(null, payload);
  });
  // A refused upload's body was not read: close the connection rather than read the rest.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete) void reply.header('connection', 'close');
    done(null, payload);
  });

  app.post<{ Querystring: { source?: string; skipInvalid?: boolean; fileName?: string } }>(
    '',
    {
      // The upload is streamed (never Fastify's body parsing); the limit is IMPORT_MAX_BYTES, enforced as it arrives.
      bodyLimit: imports.maxBytes,
      schema: {
        tags: [TAG],
        summary: 'Upload a JSON Lines file (application/x-ndjson, application/jsonl or text/plain) and import it as a job: answers 202 with the job and its Location',
        consumes: IMPORT_MEDIA_TYPES,
        querystring: object({ source: SOURCE, skipInvalid: bool, fileName: FILE_NAME }),
        response: { 202: adminAnswers.import },
      },
    },
    async (request, reply) => {
      const principal = options.principal(request);
      requireWrite(principal);
      const mediaType = (request.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
      if (!IMPORT_MEDIA_TYPES.includes(mediaType)) {
        throw new ApiError(415, 'unsupported-media-type', `send the JSON Lines file as the body with Content-Type ${IMPORT_MEDIA_TYPES.join(', ')} (got ${mediaType === '' ? 'none' : mediaType})`);
      }
      const encoding = request.headers['content-encoding'];
      if (encoding !== undefined && encoding.toLowerCase() !== 'identity') throw new ApiError(415, 'unsupported-media-type', `send the file uncompressed (got Content-Encoding ${encoding})`);
      refuseDeclaredSize(request, imports.maxBytes);
      const upload = await imports.receive(request.body as Readable).catch((error: unknown) => {
        throw importApiError(error);
      });
      const job = await imports
        .start(actorOf(principal, request), upload, {
          fileName: request.query.fileName ?? DEFAULT_FILE_NAME,
          source: request.query.source ?? DEFAULT_SOURCE,
          skipInvalid: request.query.skipInvalid ?? false,
        })
        .catch((error: unknown) => {
          throw importApiError(error);
        });
      return reply.code(202).header('location', `${app.prefix}/${job.id}`).send({ import: describeImport(job) });
    },
  );

  app.get<{ Querystring: { limit?: number } }>(
    '',
    { schema: { tags: [TAG], summary: 'Recent import jobs, newest first, with their progress (no invalid lines: see one job)', querystring: object({ limit: int(1, 200) }), response: { 200: adminAnswers.imports } } },
    async (request) => ({ imports: (await imports.list(request.query.limit ?? 50)).map((job) => describeImport(job, false)) }),
  );

  app.get<{ Params: { id: number } }>(
    '/:id',
    { schema: { tags: [TAG], summary: 'One import job: state, progress, counts by operation and the first invalid lines with their line numbers and reasons', params: idParams, response: { 200: adminAnswers.import } } },
    async (request) => ({
      import: describeImport(
        await imports.get(request.params.id).catch((error: unknown) => {
          throw importApiError(error);
        }),
      ),
    }),
  );

  return Promise.resolve();
};
