import type { FastifyInstance, FastifyRequest } from 'fastify';
import { accountStatus, type Account } from '../../accounts/account.js';
import type { AccountService } from '../../accounts/account.service.js';
import { ledgerCsv, ledgerKinds, LedgerFilterError, type LedgerFilter, type LedgerQueries, type LedgerRowType } from '../../accounts/ledger-queries.js';
import { actorOf, ApiError, requireWrite, type Principal } from '../auth/api-auth.js';
import { idParams, keyCreateBody, keyParams, keyRollBody, ledgerQuery, usageQuery, usernameParams, type Schema } from './api-schemas.js';

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

export interface AccountRouteDeps {
  readonly accounts: AccountService;
  readonly ledger: LedgerQueries;
  /** The authenticated caller (set by the API's preHandler). */
  readonly principal: (request: FastifyRequest) => Principal;
  /** The account a request is about: from the path (operators) or the session (customers). */
  readonly account: (request: FastifyRequest) => Promise<Account>;
  /** `/accounts/:username` (admin) or `/account` (customers). */
  readonly base: string;
  /** The path parameters' schema: usernameParams (admin) or none. */
  readonly params: boolean;
  readonly tag: string;
}

/** Usage and lookup statistics span at most this many days per request (a year and a day). */
const MAX_USAGE_DAYS = 366;

/**
 * The validated `from` and `to` of a usage or statistics request, as ISO-8601 UTC: `to` after
 * `from`, at most MAX_USAGE_DAYS later (each route's querystring schema has checked the format).
 */
export function usageRange(query: { from: string; to: string }): { from: string; to: string } {
  const from = new Date(query.from).toISOString();
  const to = new Date(query.to).toISOString();
  if (to <= from || Date.parse(to) - Date.parse(from) > MAX_USAGE_DAYS * 86_400_000) {
    throw new ApiError(400, 'invalid-request', `querystring: to must be after from, at most ${MAX_USAGE_DAYS} days later`, 'to');
  }
  return { from, to };
}

/**
 * Balance, keys, ledger and usage of one account: the same routes on both APIs; only how the
 * account is chosen differs (deps.account). A customer's routes have no account in the path, so
 * another account's data cannot even be named.
 */
export function registerAccountRoutes(app: FastifyInstance, deps: AccountRouteDeps): void {
  const { base, tag } = deps;
  const params = (extra?: Schema): Schema | undefined => (extra ?? (deps.params ? usernameParams : undefined));
  const keyIdParams = deps.params ? keyParams : idParams;
  const withParams = (schema: Schema, extra?: Schema): Schema => {
    const p = params(extra);
    return p ? { ...schema, params: p } : schema;
  };
  const service = (request: FastifyRequest): AccountService => deps.accounts.withActor(actorOf(deps.principal(request), request));

  app.get(`${base}/balance`, { schema: withParams({ tags: [tag], summary: 'The balance and status of the account' }) }, async (request) => {
    const account = await deps.account(request);
    return { credits: account.credits, status: accountStatus(account) };
  });

  app.get(`${base}/keys`, { schema: withParams({ tags: [tag], summary: 'The API keys of the account (never their secrets)' }) }, async (request) => {
    const account = await deps.account(request);
    return { keys: await deps.accounts.listKeys(account.username) };
  });

  app.post<{ Body: { name: string } }>(`${base}/keys`, { schema: withParams({ tags: [tag], summary: 'Create a key; its secret is shown this once', successStatus: 201, body: keyCreateBody }) }, async (request, reply) => {
    requireWrite(deps.principal(request));
    const account = await deps.account(request);
    const { key, apiKey } = await service(request).createKey(account.username, request.body.name);
    return reply.code(201).header('cache-control', 'no-store').send({ key, apiKey });
  });

  app.post<{ Params: { id: number } }>(`${base}/keys/:id/revoke`, { schema: withParams({ tags: [tag], summary: 'Revoke a key at once' }, keyIdParams) }, async (request) => {
    requireWrite(deps.principal(request));
    const account = await deps.account(request);
    return { key: await service(request).revokeKey(account.username, request.params.id) };
  });

  app.post<{ Params: { id: number }; Body: { graceSeconds?: number } | undefined }>(
    `${base}/keys/:id/roll`,
    {
      schema: withParams({ tags: [tag], summary: 'Roll a key: a new one now, the old one valid for the grace period (default 24 h)', body: keyRollBody }, keyIdParams),
      // The body is optional: without one, the default grace period applies.
      preValidation: (request, _reply, done) => {
        request.body ??= {};
        done();
      },
    },
    async (request, reply) => {
      requireWrite(deps.principal(request));
      const account = await deps.account(request);
      const rolled = await service(request).rollKey(account.username, request.params.id, request.body?.graceSeconds);
      return reply.header('cache-control', 'no-store').send(rolled);
    },
  );

  type LedgerQs = Omit<LedgerFilter, 'limit' | 'kinds'> & { limit?: number; type?: LedgerRowType; charged?: boolean };
  const filter = ({ type, charged, limit, ...q }: LedgerQs, fallback: number): LedgerFilter => {
    try {
      return { ...q, kinds: ledgerKinds(type, charged), limit: limit ?? fallback };
    } catch (error) {
      if (error instanceof LedgerFilterError) throw new ApiError(400, 'invalid-request', `querystring: ${error.message}`, error.field);
      throw error;
    }
  };

  app.get<{ Querystring: LedgerQs }>(`${base}/ledger`, { schema: withParams({ tags: [tag], summary: 'Ledger rows, newest first; page with ?before=<last id>', querystring: ledgerQuery }) }, async (request) => {
    const account = await deps.account(request);
    const rows = await deps.ledger.rows(account.id, filter(request.query, 100));
    const last = rows.at(-1);
    return { rows, next: rows.length === (request.query.limit ?? 100) && last ? last.id : null };
  });

  app.get<{ Querystring: LedgerQs }>(`${base}/ledger.csv`, { schema: withParams({ tags: [tag], summary: 'The ledger as CSV (at most 100 000 rows per request; page with ?before)', querystring: ledgerQuery }) }, async (request, reply) => {
    const account = await deps.account(request);
    const rows = await deps.ledger.rows(account.id, filter(request.query, 100_000));
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="ledger-${account.username}.csv"`)
      .send(ledgerCsv(rows));
  });

  app.get<{ Querystring: { from: string; to: string } }>(`${base}/usage`, { schema: withParams({ tags: [tag], summary: 'Lookups (charged and free) and credits by UTC day and operation', querystring: usageQuery }) }, async (request) => {
    const account = await deps.account(request);
    const { from, to } = usageRange(request.query);
    return { from, to, days: await deps.ledger.usage(account.id, from, to) };
  });
}
