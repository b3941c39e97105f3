import type { FastifyRequest } from 'fastify';
import type { Account } from '../../accounts/account.js';
import type { AccountService } from '../../accounts/account.service.js';
import type { LedgerQueries } from '../../accounts/ledger-queries.js';
import { actorOf } from '../auth/api-auth.js';
import { principalOf } from '../auth/api-principal.js';
import { usernameParams, type Schema } from './api-schemas.js';

/**
 * What the resources of one account (balance, keys, ledger, usage) need: the same routes on both
 * APIs, registered under `/accounts/:username` (operators) or the API's root (customers); only how
 * the account is chosen differs. A customer's routes have no account in the path, so another
 * account's data cannot even be named.
 */
export interface AccountScopeOptions {
  readonly accounts: AccountService;
  readonly ledger: LedgerQueries;
  /** The account a request is about: from the path (operators) or the session (customers). */
  readonly account: (request: FastifyRequest) => Promise<Account>;
  /** The account is named in the path (`/accounts/:username`), whose schema the routes declare. */
  readonly accountInPath: boolean;
  readonly tag: string;
}

/** A route's schema with the path parameters of its scope: `extra` when given, else the account's name when it is in the path. */
export function scoped(options: Pick<AccountScopeOptions, 'accountInPath'>, schema: Schema, extra?: Schema): Schema {
  const params = extra ?? (options.accountInPath ? usernameParams : undefined);
  return params ? { ...schema, params } : schema;
}

/** The account service acting as the request's caller (named in the audit rows). */
export function actingService(options: Pick<AccountScopeOptions, 'accounts'>, request: FastifyRequest): AccountService {
  return options.accounts.withActor(actorOf(principalOf(request), request));
}
