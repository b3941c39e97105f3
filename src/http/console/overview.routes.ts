import type { FastifyPluginAsync } from 'fastify';
import type { AccountService } from '../../accounts/account.service.js';
import type { AllAccountsUsage } from '../../accounts/all-accounts-usage.js';
import type { LookupStatsRepository } from '../../ops/lookup-stats.repository.js';
import type { ProviderStatus } from '../../providers/upstream/upstream-monitor.js';
import type { Clock } from '../../shared/clock.js';
import type { ConsolePageOptions } from './console-context.js';
import { LOW_BALANCE, LOW_BALANCE_LISTED, overviewPage } from './overview-page.js';
import { daysBetween } from './usage-chart.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const USAGE_DAYS = 30;

export interface OverviewPagesOptions extends ConsolePageOptions {
  readonly accounts: AccountService;
  /** Usage over every account, closed days kept in process (the admin API's /usage shares it). */
  readonly usage: Pick<AllAccountsUsage, 'usage'>;
  readonly lookupStats: LookupStatsRepository;
  readonly upstream: () => Record<string, ProviderStatus>;
  readonly clock: Clock;
}

/**
 * `GET /console/admin` (registered with that prefix), the operator overview (issue 18), over the same queries as the admin API's
 * /usage, /lookup-stats and /providers: usage of every account over the last 30 UTC days, success
 * and error rates per interface over the last 24 hours and 30 days (whole UTC hours, the current
 * one included), the upstream providers, and the accounts close to zero.
 */
export const overviewPages: FastifyPluginAsync<OverviewPagesOptions> = (app, deps) => {
  const { ctx } = deps;
  app.get('', async (request, reply) => {
    const { viewer } = await ctx.signIn(request, 'operator');
    const redirect = ctx.passwordFirst(viewer, reply);
    if (redirect) return redirect;
    const now = deps.clock.now().getTime();
    const today = now - (now % DAY_MS);
    const usageFrom = new Date(today - (USAGE_DAYS - 1) * DAY_MS);
    const usageTo = new Date(today + DAY_MS);
    const hourEnd = now - (now % HOUR_MS) + HOUR_MS;
    const iso = (ms: number) => new Date(ms).toISOString();
    const [usage, day, month, low, all] = await Promise.all([
      deps.usage.usage(usageFrom.toISOString(), usageTo.toISOString()),
      deps.lookupStats.byInterface(iso(hourEnd - DAY_MS), iso(hourEnd)),
      deps.lookupStats.byInterface(iso(hourEnd - USAGE_DAYS * DAY_MS), iso(hourEnd)),
      deps.accounts.lowBalance(LOW_BALANCE, LOW_BALANCE_LISTED),
      deps.accounts.list({ limit: 1, offset: 0 }),
    ]);
    return ctx.render(
      reply,
      overviewPage(viewer, { accounts: all.total, low, usage, days: daysBetween(usageFrom, usageTo), rates: { day, month }, upstream: deps.upstream() }),
    );
  });
  return Promise.resolve();
};
