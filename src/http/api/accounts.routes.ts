import type { FastifyPluginAsync } from 'fastify';
import { accountStatus, type Account } from '../../accounts/account.js';
import { MAX_RATE_PER_DAY, MAX_RATE_PER_SECOND, type AccountService } from '../../accounts/account.service.js';
import type { LedgerQueries } from '../../accounts/ledger-queries.js';
import { requireWrite } from '../auth/api-auth.js';
import { principalOf } from '../auth/api-principal.js';
import { actingService } from './account-scope.js';
import { accountCreateBody, bool, int, object, str, usernameParams } from './api-schemas.js';
import { accountAnswer, adminAnswers } from './api-responses.js';

/** An account as both APIs show it (never a key or its hash). */
export function describeAccount(account: Account): Record<string, unknown> {
  return {
    username: account.username,
    credits: account.credits,
    status: accountStatus(account),
    requireApiKey: account.requireApiKey,
    rateLimits: account.rateLimits,
    createdAt: account.createdAt,
    closedAt: account.closedAt,
  };
}

export interface AccountsRoutesOptions {
  readonly accounts: AccountService;
  readonly ledger: LedgerQueries;
}

const TAG = 'admin: accounts';

/** Every account, for operators, under `/accounts`: list, create, show, change, delete or close. */
export const accountsRoutes: FastifyPluginAsync<AccountsRoutesOptions> = (app, options) => {
  app.get<{ Querystring: { search?: string; limit?: number; offset?: number } }>(
    '',
    { schema: { tags: [TAG], summary: 'Accounts by username; ?search= matches part of it', querystring: object({ search: str(64), limit: int(1, 500), offset: int(0, 1_000_000_000) }), response: { 200: adminAnswers.accounts } } },
    async (request) => {
      const { search, limit = 50, offset = 0 } = request.query;
      const { accounts: found, total } = await options.accounts.list({ search, limit, offset });
      return { accounts: found.map(describeAccount), total, limit, offset };
    },
  );

  app.post<{ Body: { username: string; credits?: number } }>(
    '',
    { schema: { tags: [TAG], summary: 'Create an account; its first API key is shown this once', errorStatuses: [409], body: accountCreateBody, response: { 201: adminAnswers.createdAccount } } },
    async (request, reply) => {
      requireWrite(principalOf(request));
      const { account, apiKey } = await actingService(options, request).create(request.body.username, request.body.credits ?? 0);
      return reply.code(201).header('cache-control', 'no-store').send({ account: describeAccount(account), apiKey });
    },
  );

  app.get<{ Params: { username: string } }>('/:username', { schema: { tags: [TAG], summary: 'One account', params: usernameParams, response: { 200: accountAnswer } } }, async (request) => describeAccount(await options.accounts.show(request.params.username)));

  app.patch<{ Params: { username: string }; Body: { disabled?: boolean; requireApiKey?: boolean; rateLimits?: { perSecond?: number | null; perDay?: number | null } } }>(
    '/:username',
    {
      schema: {
        tags: [TAG],
        summary: 'Disable or enable, require the API key on every binding, set rate limits (null: server default, 0: none)',
        params: usernameParams,
        body: object({
          disabled: bool,
          requireApiKey: bool,
          rateLimits: object({ perSecond: { type: ['integer', 'null'], minimum: 0, maximum: MAX_RATE_PER_SECOND }, perDay: { type: ['integer', 'null'], minimum: 0, maximum: MAX_RATE_PER_DAY } }),
        }),
        response: { 200: accountAnswer },
      },
    },
    async (request) => {
      requireWrite(principalOf(request));
      const service = actingService(options, request);
      const { username } = request.params;
      const { disabled, requireApiKey, rateLimits } = request.body;
      let account = await service.show(username);
      if (disabled !== undefined) account = await service.setDisabled(username, disabled);
      if (requireApiKey !== undefined) account = await service.setRequireApiKey(username, requireApiKey);
      if (rateLimits !== undefined) account = await service.setRateLimits(username, rateLimits);
      return describeAccount(account);
    },
  );

  app.delete<{ Params: { username: string } }>('/:username', { schema: { tags: [TAG], summary: 'Delete an account without ledger rows; close one with a ledger', params: usernameParams, response: { 200: adminAnswers.deleted } } }, async (request) => {
    requireWrite(principalOf(request));
    return { username: request.params.username, outcome: await actingService(options, request).deleteOrClose(request.params.username, options.ledger) };
  });
  return Promise.resolve();
};

/** The logged-in customer's own account, under `/account`. */
export const ownAccountRoutes: FastifyPluginAsync<{ readonly account: (request: Parameters<typeof principalOf>[0]) => Promise<Account> }> = (app, options) => {
  app.get('', { schema: { tags: ['account'], summary: 'The account of the logged-in user', response: { 200: accountAnswer } } }, async (request) => describeAccount(await options.account(request)));
  return Promise.resolve();
};
