import type { FastifyPluginAsync } from 'fastify';
import type { AuditLog } from '../../audit/audit-log.js';
import { int, object, str } from '../api/api-schemas.js';
import type { ConsolePageOptions } from './console-context.js';
import { auditPage } from './operator-pages.js';

const auditQuery = object({ actor: str(200), action: str(64), target: str(200), before: int(1, Number.MAX_SAFE_INTEGER) });

/** The audit log, newest first, under `/console/admin/audit` (the admin API's `/audit`). */
export const auditPages: FastifyPluginAsync<ConsolePageOptions & { readonly audit: AuditLog }> = (app, options) => {
  const { ctx } = options;
  app.get<{ Querystring: { actor?: string; action?: string; target?: string; before?: number } }>('', { schema: { querystring: auditQuery } }, async (request, reply) => {
    const { viewer } = await ctx.signIn(request, 'operator');
    const limit = 100;
    const rows = await options.audit.list({ ...request.query, limit });
    const last = rows.at(-1);
    return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, auditPage(viewer, { rows, filter: request.query, next: rows.length === limit && last ? last.id : null }));
  });
  return Promise.resolve();
};
