import type { FastifyPluginAsync } from 'fastify';
import { accountStatus } from '../../accounts/account.js';
import { ledgerCsv, ledgerKinds, LedgerFilterError, type LedgerFilter, type LedgerRowType } from '../../accounts/ledger-queries.js';
import { ApiError } from '../auth/api-auth.js';
import { scoped, type AccountScopeOptions } from './account-scope.js';
import { ledgerQuery } from './api-schemas.js';
import { accountRouteAnswers, csvAnswer } from './api-responses.js';

type LedgerQs = Omit<LedgerFilter, 'limit' | 'kinds'> & { limit?: number; type?: LedgerRowType; charged?: boolean };

function filter({ type, charged, limit, ...q }: LedgerQs, fallback: number): LedgerFilter {
  try {
    return { ...q, kinds: ledgerKinds(type, charged), limit: limit ?? fallback };
  } catch (error) {
    if (error instanceof LedgerFilterError) throw new ApiError(400, 'invalid-request', `querystring: ${error.message}`, error.field);
    throw error;
  }
}

/** An account's balance and ledger, under `{account}`: `/balance`, `/ledger`, `/ledger.csv`. */
export const ledgerRoutes: FastifyPluginAsync<AccountScopeOptions> = (app, options) => {
  const { tag } = options;

  app.get('/balance', { schema: scoped(options, { tags: [tag], summary: 'The balance and status of the account', response: { 200: accountRouteAnswers.balance } }) }, async (request) => {
    const account = await options.account(request);
    return { credits: account.credits, status: accountStatus(account) };
  });

  app.get<{ Querystring: LedgerQs }>('/ledger', { schema: scoped(options, { tags: [tag], summary: 'Ledger rows, newest first; page with ?before=<last id>', querystring: ledgerQuery, response: { 200: accountRouteAnswers.ledger } }) }, async (request) => {
    const account = await options.account(request);
    const rows = await options.ledger.rows(account.id, filter(request.query, 100));
    const last = rows.at(-1);
    return { rows, next: rows.length === (request.query.limit ?? 100) && last ? last.id : null };
  });

  app.get<{ Querystring: LedgerQs }>('/ledger.csv', { schema: scoped(options, { tags: [tag], summary: 'The ledger as CSV (at most 100 000 rows per request; page with ?before)', querystring: ledgerQuery, response: { 200: { content: { 'text/csv': { schema: csvAnswer } } } } }) }, async (request, reply) => {
    const account = await options.account(request);
    const rows = await options.ledger.rows(account.id, filter(request.query, 100_000));
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="ledger-${account.username}.csv"`)
      .send(ledgerCsv(rows));
  });
  return Promise.resolve();
};
