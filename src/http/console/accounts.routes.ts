import type { FastifyPluginAsync } from 'fastify';
import { MAX_RATE_PER_DAY, MAX_RATE_PER_SECOND } from '../../accounts/account.service.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { UserService } from '../../users/user.service.js';
import { actorOf, requireWrite } from '../auth/api-auth.js';
import { accountCreateBody, int, object, str, usernameParams } from '../api/api-schemas.js';
import { secretShown } from './account-sections.js';
import { accountView, backToAccount, DONE_MESSAGES, ledgerQs, type AccountViewDeps, type LedgerQs } from './account-view.js';
import type { ConsolePageOptions } from './console-context.js';
import { accountCreatedPage, accountPaths, accountsPage, operatorAccountPage } from './operator-pages.js';

export interface AccountsPagesOptions extends ConsolePageOptions, AccountViewDeps {
  readonly users: UserService;
  readonly audit: AuditLog;
}

/** Page size and paging of the account list. */
const listQuery = object({ search: str(64), offset: int(0, 1_000_000_000) });
const nullableRate = (max: number) => ({ anyOf: [{ type: 'integer', minimum: 0, maximum: max }, { type: 'string', maxLength: 0 }] });

/**
 * Every account, for operators, under `/console/admin/accounts`: the list, a new account, an
 * account's page, its status and settings. The same service calls as the admin API's `/accounts`.
 */
export const accountsPages: FastifyPluginAsync<AccountsPagesOptions> = (app, options) => {
  const { ctx } = options;
  const service = (...args: Parameters<typeof actorOf>) => options.accounts.withActor(actorOf(...args));

  app.get<{ Querystring: { search?: string; offset?: number } }>('', { schema: { querystring: listQuery } }, async (request, reply) => {
    const { viewer } = await ctx.signIn(request, 'operator');
    const { search = '', offset = 0 } = request.query;
    const limit = 50;
    const { accounts, total } = await options.accounts.list({ search, limit, offset });
    return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, accountsPage(viewer, { accounts, total, search, offset, limit }));
  });

  app.post<{ Body: { username: string; credits?: number } }>('', { schema: { body: ctx.formOf(accountCreateBody) } }, async (request, reply) => {
    const { principal, viewer } = await ctx.signIn(request, 'operator');
    requireWrite(principal);
    const { account, apiKey } = await service(principal, request).create(request.body.username, request.body.credits ?? 0);
    const back = accountPaths(account.username).page;
    return ctx.render(reply, accountCreatedPage(viewer, secretShown(`Account ${account.username} is created with ${account.credits} credits and its first API key.`, account.username, apiKey, ctx.baseUrl(request), back)), 201);
  });

  app.get<{ Params: { username: string }; Querystring: LedgerQs & { done?: string } }>(
    '/:username',
    { schema: { params: usernameParams, querystring: object({ ...(ledgerQs.properties as Record<string, Record<string, unknown>>), done: str(32) }) } },
    async (request, reply) => {
      const { viewer } = await ctx.signIn(request, 'operator');
      const account = await options.accounts.show(request.params.username);
      const { done, ...query } = request.query;
      const [view, users, audit] = await Promise.all([
        accountView(options, account, query),
        options.users.list(account.id),
        options.audit.list({ targetKind: 'account', target: account.username, limit: 20 }),
      ]);
      const notice = done === undefined ? undefined : DONE_MESSAGES[done];
      return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, operatorAccountPage(viewer, { ...view, users, audit, notice }));
    },
  );

  app.post<{ Params: { username: string }; Body: { disabled: boolean } }>(
    '/:username/status',
    { schema: { params: usernameParams, body: ctx.form({ disabled: { type: 'boolean' } }, ['disabled']) } },
    async (request, reply) => {
      const { principal } = await ctx.signIn(request, 'operator');
      requireWrite(principal);
      await service(principal, request).setDisabled(request.params.username, request.body.disabled);
      return backToAccount(reply, request.params.username, request.body.disabled ? 'disabled' : 'enabled');
    },
  );

  app.post<{ Params: { username: string }; Body: { requireApiKey: boolean; perSecond?: number | ''; perDay?: number | '' } }>(
    '/:username/settings',
    { schema: { params: usernameParams, body: ctx.form({ requireApiKey: { type: 'boolean' }, perSecond: nullableRate(MAX_RATE_PER_SECOND), perDay: nullableRate(MAX_RATE_PER_DAY) }, ['requireApiKey']) } },
    async (request, reply) => {
      const { principal } = await ctx.signIn(request, 'operator');
      requireWrite(principal);
      const accounts = service(principal, request);
      const { username } = request.params;
      const { requireApiKey, perSecond, perDay } = request.body;
      const rate = (value: number | '' | undefined): number | null => (value === '' || value === undefined ? null : value);
      await accounts.setRequireApiKey(username, requireApiKey);
      await accounts.setRateLimits(username, { perSecond: rate(perSecond), perDay: rate(perDay) });
      return backToAccount(reply, username, 'saved');
    },
  );
  return Promise.resolve();
};
