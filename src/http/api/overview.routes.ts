import type { FastifyPluginAsync } from 'fastify';
import type { AllAccountsUsage } from '../../accounts/all-accounts-usage.js';
import type { LookupStatsRepository } from '../../ops/lookup-stats.repository.js';
import { usageRange } from './usage.routes.js';
import { accountRouteAnswers, adminAnswers } from './api-responses.js';
import { usageQuery } from './api-schemas.js';

export interface OverviewRoutesOptions {
  /** Usage over every account, closed days kept in process (the console's overview shares it). */
  readonly usage: Pick<AllAccountsUsage, 'usage'>;
  readonly lookupStats: LookupStatsRepository;
}

const TAG = 'admin: operations';

/**
 * What the operator overview shows, for machines (issues 16 and 18): usage over every account and
 * the lookups' success and error rates per interface over every instance, at the admin API's root
 * (`/usage`, `/lookup-stats`). Registered inside the admin API's scope, so its login, role and
 * rate-limit hooks apply; reading needs no write role.
 */
export const overviewRoutes: FastifyPluginAsync<OverviewRoutesOptions> = (app, options) => {
  app.get<{ Querystring: { from: string; to: string } }>(
    '/usage',
    { schema: { tags: [TAG], summary: 'Charged lookups and credits of every account by UTC day and operation', querystring: usageQuery, response: { 200: accountRouteAnswers.usage } } },
    async (request) => {
      const { from, to } = usageRange(request.query);
      return { from, to, days: await options.usage.usage(from, to) };
    },
  );

  app.get<{ Querystring: { from: string; to: string } }>(
    '/lookup-stats',
    {
      schema: {
        tags: [TAG],
        summary: 'Lookups per interface over every instance (hours starting in [from, to)): total, successes, errors by code, success rate',
        querystring: usageQuery,
        response: { 200: adminAnswers.lookupStats },
      },
    },
    async (request) => {
      const { from, to } = usageRange(request.query);
      return { from, to, interfaces: await options.lookupStats.byInterface(from, to) };
    },
  );
  return Promise.resolve();
};
