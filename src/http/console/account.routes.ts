import type { FastifyPluginAsync } from 'fastify';
import { AccountError } from '../../accounts/account.service.js';
import type { Account } from '../../accounts/account.js';
import type { Principal } from '../auth/api-auth.js';
import { object, str } from '../api/api-schemas.js';
import { accountView, ledgerQs, type AccountViewDeps, type LedgerQs } from './account-view.js';
import type { ConsolePageOptions } from './console-context.js';
import type { Html } from './html.js';
import { customerPage } from './customer-pages.js';
import { welcomeNotice } from './signup-pages.js';
import { joinedNotice } from './invite-pages.js';

/** The account of a customer's session (never one named in the request). */
export async function ownAccount(deps: Pick<AccountViewDeps, 'accounts'>, principal: Principal): Promise<Account> {
  if (principal.user.account === null) throw new AccountError('NOT_FOUND', 'this user has no account');
  return deps.accounts.show(principal.user.account);
}

/** The customer's own account page, under `/console/account`: balance, usage, ledger and keys. */
export const accountPages: FastifyPluginAsync<ConsolePageOptions & AccountViewDeps & { readonly credit: (account: Account) => Promise<Html | undefined> }> = (app, options) => {
  const { ctx } = options;
  app.get<{ Querystring: LedgerQs & { welcome?: string; joined?: string } }>(
    '',
    { schema: { querystring: object({ ...(ledgerQs.properties as Record<string, Record<string, unknown>>), welcome: str(1), joined: str(1) }) } },
    async (request, reply) => {
      const { principal, viewer } = await ctx.signIn(request, 'customer');
      const { welcome, joined, ...query } = request.query;
      const account = await ownAccount(options, principal);
      const notice = welcome !== undefined ? welcomeNotice(account) : joined !== undefined ? joinedNotice(principal.user) : undefined;
      return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, customerPage(viewer, await accountView(options, account, query), notice, undefined, await options.credit(account)));
    },
  );
  return Promise.resolve();
};
