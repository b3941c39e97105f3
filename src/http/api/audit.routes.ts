import type { FastifyPluginAsync } from 'fastify';
import type { AuditLog } from '../../audit/audit-log.js';
import { int, object, str, timestamp } from './api-schemas.js';
import { adminAnswers } from './api-responses.js';

/** The append-only audit log, newest first, under `/audit`; reading needs no write role. */
export const auditRoutes: FastifyPluginAsync<{ readonly audit: AuditLog }> = (app, options) => {
  app.get<{ Querystring: { actor?: string; action?: string; targetKind?: string; target?: string; from?: string; to?: string; before?: number; limit?: number } }>(
    '',
    {
      schema: {
        tags: ['admin: audit'],
        summary: 'The audit log, newest first; page with ?before=<last id>',
        querystring: object({ actor: str(200), action: str(64), targetKind: str(32), target: str(200), from: timestamp, to: timestamp, before: int(1, Number.MAX_SAFE_INTEGER), limit: int(1, 500) }),
        response: { 200: adminAnswers.audit },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 100;
      const rows = await options.audit.list({ ...request.query, limit });
      const last = rows.at(-1);
      return { rows, next: rows.length === limit && last ? last.id : null };
    },
  );
  return Promise.resolve();
};
