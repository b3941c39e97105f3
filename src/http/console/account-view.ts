import type { FastifyReply } from 'fastify';
import type { Account } from '../../accounts/account.js';
import type { AccountService } from '../../accounts/account.service.js';
import { LEDGER_ROW_TYPES, ledgerKinds, type LedgerQueries, type LedgerRowType } from '../../accounts/ledger-queries.js';
import type { Clock } from '../../shared/clock.js';
import { int, object, str } from '../api/api-schemas.js';
import type { AccountView } from './account-sections.js';
import { accountPaths } from './operator-pages.js';
import { daysBetween } from './usage-chart.js';

const USAGE_DAYS = 30;
const LEDGER_PAGE = 50;

/** The console's ledger filters (account pages' query string). */
export type LedgerQs = { operation?: string; type?: LedgerRowType; charged?: boolean; before?: number; key?: string };

/** `charged` is the older form of `type` (links from before free lookups had rows still work). */
export const ledgerQs = object({ operation: str(64), key: str(64), type: { type: 'string', enum: [...LEDGER_ROW_TYPES] }, charged: { type: 'boolean' }, before: int(1, Number.MAX_SAFE_INTEGER) });

export interface AccountViewDeps {
  readonly accounts: AccountService;
  readonly ledger: LedgerQueries;
  readonly clock: Clock;
  /** The catalogue's operation names, the choices of the ledger's "Operation" filter. */
  readonly operations: readonly string[];
}

/** What an account's page shows (the customer's own and the operator's): usage, a ledger page, keys. */
export async function accountView(deps: AccountViewDeps, account: Account, query: LedgerQs): Promise<AccountView> {
  // The last USAGE_DAYS whole UTC days, today included.
  const now = deps.clock.now();
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const from = new Date(today - (USAGE_DAYS - 1) * 86_400_000);
  const to = new Date(today + 86_400_000);
  const days = daysBetween(from, to);
  const kinds = ledgerKinds(query.type, query.charged);
  // An older link's charged=true is type=charged; charged=false (every row but charged lookups) has no type and stays.
  const filter = query.charged === true ? { operation: query.operation, type: 'charged' as const, key: query.key } : { operation: query.operation, type: query.type, charged: query.charged, key: query.key };
  const [usage, keyUsage, rows, keys] = await Promise.all([
    deps.ledger.usage(account.id, from.toISOString(), to.toISOString()),
    deps.ledger.usageByKey(account.id, from.toISOString(), to.toISOString()),
    deps.ledger.rows(account.id, { operation: query.operation, kinds, key: query.key, before: query.before, limit: LEDGER_PAGE }),
    deps.accounts.listKeysWithSpend(account.username),
  ]);
  const last = rows.at(-1);
  return { account, keys, ledger: rows, nextBefore: rows.length === LEDGER_PAGE && last ? last.id : null, usage, keyUsage, days, filter, operations: deps.operations };
}

/** The notices an operator's account page shows after a change (`?done=`). */
export const DONE_MESSAGES: Readonly<Record<string, string>> = {
  granted: 'Credits granted.',
  removed: 'Credits removed.',
  disabled: 'The account is disabled.',
  enabled: 'The account is enabled.',
  saved: 'Settings saved.',
  revoked: 'The key is revoked.',
};

/** Back to the operator's page of the account, with the notice of what was done (and how many credits). */
export const backToAccount = (reply: FastifyReply, username: string, done: keyof typeof DONE_MESSAGES, amount?: number): FastifyReply =>
  reply.redirect(`${accountPaths(username).page}?done=${done}${amount === undefined ? '' : `&amount=${amount}`}`, 303);

/** The notice of what was done, saying what happened: "Granted 1,000 credits to acme: balance 1,250." */
export function doneNotice(done: string, account: Account, amount: number | undefined): string | undefined {
  const n = (value: number) => value.toLocaleString('en');
  if ((done === 'granted' || done === 'removed') && amount !== undefined) {
    return `${done === 'granted' ? 'Granted' : 'Removed'} ${n(amount)} credit${amount === 1 ? '' : 's'} ${done === 'granted' ? 'to' : 'from'} ${account.username}: balance ${n(account.credits)}.`;
  }
  return DONE_MESSAGES[done];
}
