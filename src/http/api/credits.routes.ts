import type { FastifyPluginAsync } from 'fastify';
import type { AccountService } from '../../accounts/account.service.js';
import { requireWrite } from '../auth/api-auth.js';
import { principalOf } from '../auth/api-principal.js';
import { actingService } from './account-scope.js';
import { creditChangeBody, usernameParams } from './api-schemas.js';
import { adminAnswers } from './api-responses.js';

/** Granting and removing an account's credits, under `/accounts/:username/credits` (operators only). */
export const creditsRoutes: FastifyPluginAsync<{ readonly accounts: AccountService }> = (app, options) => {
  app.post<{ Params: { username: string }; Body: { operation: 'grant' | 'remove'; amount: number; reference?: string; note?: string } }>(
    '',
    {
      schema: {
        tags: ['admin: accounts'],
        summary:
          'Grant or remove credits: one ledger row with the reference and note (409 when removing more than the balance). A change repeated with the reference of an earlier one moves nothing and answers that one (Idempotent-Replayed: true); 409 when its amount differs',
        errorStatuses: [409],
        params: usernameParams,
        body: creditChangeBody,
        response: { 200: adminAnswers.credits },
      },
    },
    async (request, reply) => {
      requireWrite(principalOf(request));
      const { operation, ...fields } = request.body;
      const change = { account: request.params.username, ...fields };
      const service = actingService(options, request);
      const { credits, replayed } = operation === 'grant' ? await service.grantCredits(change) : await service.removeCredits(change);
      // A repeated reference answers the first change's result, marked as the lookup API marks replays.
      if (replayed) void reply.header('idempotent-replayed', 'true');
      return { username: request.params.username, credits };
    },
  );
  return Promise.resolve();
};
