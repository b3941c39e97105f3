import type { FastifyInstance } from 'fastify';
import type { AllAccountsUsage } from '../../accounts/all-accounts-usage.js';
import type { LookupStatsRepository } from '../../ops/lookup-stats.repository.js';
import { usageRange } from './account.routes.js';
import { usageQuery } from './api-schemas.js';

export interface OverviewRouteDeps {
  /** Usage over every account, closed days kept in process (the console's overview shares it). */
  readonly usage: Pick<AllAccountsUsage, 'usage'>;
  readonly lookupStats: LookupStatsRepository;
}

const TAG = 'admin: operations';

/**
 * What the operator overview shows, for machines (issues 16 and 18): usage over every account and
 * the lookups' success and error rates per interface over every instance. Registered inside the
 * admin API's scope, so its login, role and rate-limit hooks apply; reading needs no write role.
 */
export function registerOverviewRoutes(app: FastifyInstance, deps: OverviewRouteDeps): void {
  app.get<{ Querystring: { from: string; to: string } }>(
    '/usage',
    { schema: { tags: [TAG], summary: 'Charged lookups and credits of every account by UTC day and operation', querystring: usageQuery } },
    async (request) => {
      const { from, to } = usageRange(request.query);
      return { from, to, days: await deps.usage.usage(from, to) };
    },
  );

  app.get<{ Querystring: { from: string; to: string } }>(
    '/lookup-stats',
    {
      schema: {
        tags: [TAG],
        summary: 'Lookups per interface over every instance (hours starting in [from, to)): total, successes, errors by code, success rate',
        querystring: usageQuery,
      },
    },
    async (request) => {
      const { from, to } = usageRange(request.query);
      return { from, to, interfaces: await deps.lookupStats.byInterface(from, to) };
    },
  );
}
