import type { FastifyPluginAsync } from 'fastify';
import type { AccountService } from '../../accounts/account.service.js';
import { requireWrite } from '../auth/api-auth.js';
import { principalOf } from '../auth/api-principal.js';
import { actingService } from './account-scope.js';
import { creditChangeBody, usernameParams } from './api-schemas.js';

/** Granting and removing an account's credits, under `/accounts/:username/credits` (operators only). */
export const creditsRoutes: FastifyPluginAsync<{ readonly accounts: AccountService }> = (app, options) => {
  app.post<{ Params: { username: string }; Body: { operation: 'grant' | 'remove'; amount: number; reference?: string; note?: string } }>(
    '',
    {
      schema: {
        tags: ['admin: accounts'],
        summary: 'Grant or remove credits: one ledger row with the reference and note (409 when removing more than the balance)',
        errorStatuses: [409],
        params: usernameParams,
        body: creditChangeBody,
      },
    },
    async (request) => {
      requireWrite(principalOf(request));
      const { operation, amount, reference = null, note = null } = request.body;
      const service = actingService(options, request);
      const credits =
        operation === 'grant'
          ? await service.addCredits(request.params.username, amount, note, reference ?? '')
          : await service.removeCredits(request.params.username, amount, reference, note);
      return { username: request.params.username, credits };
    },
  );
  return Promise.resolve();
};
