import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { formErrorOf } from './form-errors.js';
import { operatorAccountHtml, type OperatorAccountDeps } from './accounts.routes.js';
import { actorOf, requireWrite } from '../auth/api-auth.js';
import { creditChangeBody, usernameParams } from '../api/api-schemas.js';
import { backToAccount } from './account-view.js';
import type { ConsolePageOptions } from './console-context.js';

/** Granting and removing an account's credits, under `/console/admin/accounts/:username/credits`. */
export const creditPages: FastifyPluginAsync<ConsolePageOptions & OperatorAccountDeps> = (app, options) => {
  const { ctx } = options;
  app.post<{ Params: { username: string }; Body: { operation: 'grant' | 'remove'; amount: number; reference?: string; note?: string } }>(
    '',
    { schema: { params: usernameParams, body: ctx.formOf(creditChangeBody) }, attachValidation: true },
    async (request, reply) => {
      const { principal, viewer } = await ctx.signIn(request, 'operator');
      requireWrite(principal);
      const { operation, amount, reference, note } = request.body;
      const service = options.accounts.withActor(actorOf(principal, request));
      const { username } = request.params;
      try {
        if (request.validationError) throw request.validationError;
        // The same calls as POST /admin/api/accounts/:username/credits.
        const change = { account: username, amount, reference, note };
        if (operation === 'grant') await service.grantCredits(change);
        else await service.removeCredits(change);
      } catch (thrown) {
        // A refused value (amount 0, more than the balance) shows the page again, the form kept.
        const error = formErrorOf('credits', request.body, request.validationError as FastifyError | undefined, thrown);
        if (!error) throw thrown;
        return ctx.render(reply, await operatorAccountHtml(options, viewer, username, {}, { error }), 400);
      }
      return backToAccount(reply, username, operation === 'grant' ? 'granted' : 'removed', amount);
    },
  );
  return Promise.resolve();
};
