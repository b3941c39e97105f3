import type { FastifyPluginAsync } from 'fastify';
import { requireWrite } from '../auth/api-auth.js';
import { principalOf } from '../auth/api-principal.js';
import { actingService, scoped, type AccountScopeOptions } from './account-scope.js';
import type { KeySettingsChange } from '../../accounts/key-rules.js';
import { idParams, keyCreateApiBody, keyParams, keyRollBody, keyUpdateBody } from './api-schemas.js';
import { accountRouteAnswers } from './api-responses.js';

/**
 * An account's API keys, under `{account}/keys`: list (with each key's spend this period), create
 * (with its own rules: issue 33), change its rules, revoke, roll; a secret is shown once.
 */
export const keysRoutes: FastifyPluginAsync<AccountScopeOptions> = (app, options) => {
  const { tag } = options;
  const keyIdParams = options.accountInPath ? keyParams : idParams;

  app.get('', { schema: scoped(options, { tags: [tag], summary: 'The API keys of the account (never their secrets), with what each spent this period', response: { 200: accountRouteAnswers.keys } }) }, async (request) => {
    const account = await options.account(request);
    return { keys: await options.accounts.listKeysWithSpend(account.username) };
  });

  app.post<{ Body: { name: string } & KeySettingsChange }>(
    '',
    {
      schema: scoped(options, {
        tags: [tag],
        summary: 'Create a key, with its own rules if given (cap, operations, rate limits, addresses, labels); its secret is shown this once',
        body: keyCreateApiBody,
        response: { 201: accountRouteAnswers.createdKey },
      }),
    },
    async (request, reply) => {
      requireWrite(principalOf(request));
      const account = await options.account(request);
      const { name, ...settings } = request.body;
      const { key, apiKey } = await actingService(options, request).createKey(account.username, name, settings);
      return reply.code(201).header('cache-control', 'no-store').send({ key, apiKey });
    },
  );

  app.patch<{ Params: { id: number }; Body: KeySettingsChange }>(
    '/:id',
    {
      schema: scoped(options, { tags: [tag], summary: "Change a key's own rules: the fields given (null clears one), the others unchanged; audited", body: keyUpdateBody, response: { 200: accountRouteAnswers.key } }, keyIdParams),
    },
    async (request) => {
      requireWrite(principalOf(request));
      const account = await options.account(request);
      return { key: await actingService(options, request).updateKey(account.username, request.params.id, request.body) };
    },
  );

  app.post<{ Params: { id: number } }>('/:id/revoke', { schema: scoped(options, { tags: [tag], summary: 'Revoke a key at once', response: { 200: accountRouteAnswers.key } }, keyIdParams) }, async (request) => {
    requireWrite(principalOf(request));
    const account = await options.account(request);
    return { key: await actingService(options, request).revokeKey(account.username, request.params.id) };
  });

  app.post<{ Params: { id: number }; Body: { graceSeconds?: number } | undefined }>(
    '/:id/roll',
    {
      schema: scoped(options, { tags: [tag], summary: 'Roll a key: a new one now, the old one valid for the grace period (default 24 h)', body: keyRollBody, response: { 200: accountRouteAnswers.rolledKey } }, keyIdParams),
      // The body is optional: without one, the default grace period applies.
      preValidation: (request, _reply, done) => {
        request.body ??= {};
        done();
      },
    },
    async (request, reply) => {
      requireWrite(principalOf(request));
      const account = await options.account(request);
      const rolled = await actingService(options, request).rollKey(account.username, request.params.id, request.body?.graceSeconds);
      return reply.header('cache-control', 'no-store').send(rolled);
    },
  );
  return Promise.resolve();
};
