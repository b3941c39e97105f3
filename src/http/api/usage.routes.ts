import type { FastifyPluginAsync } from 'fastify';
import { ApiError } from '../auth/api-auth.js';
import { scoped, type AccountScopeOptions } from './account-scope.js';
import { keyUsageQuery, usageQuery } from './api-schemas.js';
import { accountRouteAnswers } from './api-responses.js';

/** Usage and lookup statistics span at most this many days per request (a year and a day). */
const MAX_USAGE_DAYS = 366;

/**
 * The validated `from` and `to` of a usage or statistics request, as ISO-8601 UTC: `to` after
 * `from`, at most MAX_USAGE_DAYS later (each route's querystring schema has checked the format).
 */
export function usageRange(query: { from: string; to: string }): { from: string; to: string } {
  const from = new Date(query.from).toISOString();
  const to = new Date(query.to).toISOString();
  if (to <= from || Date.parse(to) - Date.parse(from) > MAX_USAGE_DAYS * 86_400_000) {
    throw new ApiError(400, 'invalid-request', `querystring: to must be after from, at most ${MAX_USAGE_DAYS} days later`, 'to');
  }
  return { from, to };
}

/** An account's lookups and credits by UTC day and operation, under `{account}/usage`. */
export const usageRoutes: FastifyPluginAsync<AccountScopeOptions> = (app, options) => {
  app.get<{ Querystring: { from: string; to: string; key?: string } }>(
    '',
    { schema: scoped(options, { tags: [options.tag], summary: 'Lookups (charged and free) and credits by UTC day and operation; ?key=NAME for one API key', querystring: usageQuery, response: { 200: accountRouteAnswers.usage } }) },
    async (request) => {
      const account = await options.account(request);
      const { from, to } = usageRange(request.query);
      return { from, to, days: await options.ledger.usage(account.id, from, to, request.query.key) };
    },
  );
  app.get<{ Querystring: { from: string; to: string } }>(
    '/keys',
    { schema: scoped(options, { tags: [options.tag], summary: 'Lookups and credits by UTC day and API key (issue 33: spend per key)', querystring: keyUsageQuery, response: { 200: accountRouteAnswers.keyUsage } }) },
    async (request) => {
      const account = await options.account(request);
      const { from, to } = usageRange(request.query);
      return { from, to, days: await options.ledger.usageByKey(account.id, from, to) };
    },
  );
  return Promise.resolve();
};
