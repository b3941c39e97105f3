import type { FastifyPluginAsync } from 'fastify';
import multipart from '@fastify/multipart';
import { actorOf, ApiError, requireWrite } from '../auth/api-auth.js';
import { idParams } from '../api/api-schemas.js';
import { DEFAULT_FILE_NAME, DEFAULT_SOURCE, importApiError, refuseDeclaredSize, SOURCE_PATTERN } from '../api/imports.routes.js';
import type { Actor } from '../../audit/audit-log.js';
import type { ImportJobs, ImportRequest } from '../../datasets/import/import-jobs.js';
import type { Upload } from '../../datasets/import/upload-file.js';
import type { ConsolePageOptions } from './console-context.js';
import { importPage, importPath, importsPage, SOURCE_MAX } from './import-pages.js';
import { CSRF_FIELD, type Viewer } from './layout.js';

export interface ImportPagesOptions extends ConsolePageOptions {
  readonly imports: ImportJobs;
}

/** The form's fields besides the file, each a short string. */
const FIELDS = new Set([CSRF_FIELD, 'source', 'skipInvalid']);
const SOURCE_RULE = new RegExp(SOURCE_PATTERN);
const RECENT = 50;
/** What a multipart form adds around the file: boundaries, part headers, the other fields. */
const FORM_OVERHEAD = 16 * 1024;

/** The options of the form as the import service takes them; the API's rules, with the form's messages. */
function readFields(fields: Readonly<Record<string, string>>, fileName: string): ImportRequest {
  const source = fields.source === undefined || fields.source === '' ? DEFAULT_SOURCE : fields.source;
  if (source.length > SOURCE_MAX) throw new ApiError(400, 'invalid-request', `Source name may be at most ${SOURCE_MAX} characters long (this one has ${source.length}).`, 'source');
  if (!SOURCE_RULE.test(source)) throw new ApiError(400, 'invalid-request', 'Source name may hold only letters, digits and . _ -.', 'source');
  const skip = fields.skipInvalid;
  if (skip !== undefined && skip !== 'true' && skip !== 'false') throw new ApiError(400, 'invalid-request', 'The checkbox “Import the valid lines even if some lines are invalid” must be ticked or left empty.', 'skipInvalid');
  // Browsers send the base name; a few older ones the whole path.
  const base = fileName.split(/[\\/]/).pop()?.trim() ?? '';
  return { source, skipInvalid: skip === 'true', fileName: base === '' ? DEFAULT_FILE_NAME : base.slice(0, 255) };
}

/**
 * The console's Imports pages (issue 18): the job list with the upload form, and each job's
 * progress and validation report. Without JavaScript the form posts multipart/form-data here
 * (@fastify/multipart, registered in this scope only); console.js uploads to the admin API
 * instead, for an upload progress bar. Both end in ImportJobs, as the API does.
 */
export const importPages: FastifyPluginAsync<ImportPagesOptions> = async (app, options) => {
  const { ctx, imports } = options;
  await app.register(multipart, {
    // One file; the fields are the CSRF token and two short options. The file's own limit is one
    // byte past IMPORT_MAX_BYTES, so the upload's count (receiveUpload) is what refuses it.
    limits: { fields: FIELDS.size, fieldSize: 256, fieldNameSize: 64, files: 1, parts: FIELDS.size + 1, headerPairs: 20, fileSize: imports.maxBytes + 1 },
  });
  // A refused upload's body was not read: close the connection rather than read the rest.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete) void reply.header('connection', 'close');
    done(null, payload);
  });

  app.get('', async (request, reply) => {
    const { viewer } = await ctx.signIn(request, 'operator');
    return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, importsPage(viewer, { jobs: await imports.list(RECENT), maxBytes: imports.maxBytes }));
  });

  app.get<{ Params: { id: number } }>('/:id', { schema: { params: idParams } }, async (request, reply) => {
    const { viewer } = await ctx.signIn(request, 'operator');
    const job = await imports.get(request.params.id).catch((error: unknown) => {
      throw importApiError(error);
    });
    return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, importPage(viewer, job));
  });

  app.post('', async (request, reply) => {
    if (!request.isMultipart()) throw new ApiError(415, 'unsupported-media-type', 'Send the form with its file (multipart/form-data).');
    refuseDeclaredSize(request, imports.maxBytes, FORM_OVERHEAD);
    const fields: Record<string, string> = {};
    let upload: Upload | undefined;
    let start: { actor: Actor; request: ImportRequest } | undefined;
    let viewer: Viewer | undefined;
    try {
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          if (upload) throw new ApiError(400, 'invalid-request', 'The file must be the last field of the form.');
          if (!FIELDS.has(part.fieldname) || part.valueTruncated || typeof part.value !== 'string') throw new ApiError(400, 'invalid-request', `The field “${part.fieldname}” is not part of this form.`, part.fieldname);
          fields[part.fieldname] = part.value;
          continue;
        }
        if (part.fieldname !== 'file' || upload) throw new ApiError(400, 'invalid-request', 'Send one file, in the field “file”.', part.fieldname);
        // Who is asking, before a byte of the file is stored: the session, the CSRF token (a
        // field the form sends before the file) and the role.
        request.body = fields;
        const signedIn = await ctx.signIn(request, 'operator');
        requireWrite(signedIn.principal);
        viewer = signedIn.viewer;
        start = { actor: actorOf(signedIn.principal, request), request: readFields(fields, part.filename) };
        upload = await imports.receive(part.file).catch((error: unknown) => {
          throw importApiError(error);
        });
      }
      if (!upload || !start) throw new ApiError(400, 'invalid-request', 'Choose a file to upload.', 'file');
      const job = await imports.start(start.actor, upload, start.request).catch((error: unknown) => {
        throw importApiError(error);
      });
      // The job owns the file now.
      upload = undefined;
      return await reply.redirect(importPath(job.id), 303);
    } catch (error) {
      // A bad source name: the form again, the name kept, the message at the field (issue 26 item 10).
      if (!(viewer && error instanceof ApiError && error.field === 'source')) throw error;
      const refused = { form: 'import', field: 'source', text: error.message, values: { source: fields.source ?? '' } };
      return await ctx.render(reply, importsPage(viewer, { jobs: await imports.list(RECENT), maxBytes: imports.maxBytes, error: refused }), 400);
    } finally {
      await upload?.discard();
    }
  });
};
