import type { FastifyPluginAsync } from 'fastify';
import type { AccountService } from '../../accounts/account.service.js';
import { actorOf, requireWrite } from '../auth/api-auth.js';
import { creditChangeBody, usernameParams } from '../api/api-schemas.js';
import { backToAccount } from './account-view.js';
import type { ConsolePageOptions } from './console-context.js';

/** Granting and removing an account's credits, under `/console/admin/accounts/:username/credits`. */
export const creditPages: FastifyPluginAsync<ConsolePageOptions & { readonly accounts: AccountService }> = (app, options) => {
  const { ctx } = options;
  app.post<{ Params: { username: string }; Body: { operation: 'grant' | 'remove'; amount: number; reference?: string; note?: string } }>(
    '',
    { schema: { params: usernameParams, body: ctx.formOf(creditChangeBody) } },
    async (request, reply) => {
      const { principal } = await ctx.signIn(request, 'operator');
      requireWrite(principal);
      const { operation, amount, reference = null, note = null } = request.body;
      const service = options.accounts.withActor(actorOf(principal, request));
      const { username } = request.params;
      // The same calls as POST /admin/api/accounts/:username/credits.
      if (operation === 'grant') await service.addCredits(username, amount, note, reference ?? '');
      else await service.removeCredits(username, amount, reference, note);
      return backToAccount(reply, username, operation === 'grant' ? 'granted' : 'removed');
    },
  );
  return Promise.resolve();
};
