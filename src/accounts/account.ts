import type { Selectable } from 'kysely';
import type { AccountsTable, ApiKeysTable } from '../storage/database.js';
import type { LiveKey } from './api-key.js';
import { compileRules, settingsOf } from './key-rules.js';

/** The columns of a live key the account cache holds (AccountRepository.liveKeys). */
export type LiveKeyRow = Pick<
  Selectable<ApiKeysTable>,
  'id' | 'name' | 'key_hash' | 'expires_at' | 'cap_credits' | 'cap_period' | 'operations' | 'rate_per_second' | 'rate_per_day' | 'allowed_ips' | 'labels'
>;

/** An account as the domain sees it. */
export interface Account {
  readonly id: number;
  readonly username: string;
  /** The keys that authenticate the account (not revoked; a rolled key until it expires). */
  readonly apiKeys: readonly LiveKey[];
  readonly credits: number;
  readonly disabled: boolean;
  /** When set, the XML bindings require the API key (HTTP Basic) as well as the username. */
  readonly requireApiKey: boolean;
  readonly createdAt: string;
  /** The account's own rate limits, as stored (see AccountRateLimits). */
  readonly rateLimits: AccountRateLimits;
  /** Set when the account was closed (issue 16): disabled for good, keys revoked, ledger kept. */
  readonly closedAt: string | null;
}

/** What the balance route answers besides the credits. */
export type AccountStatus = 'active' | 'disabled' | 'closed';

export function accountStatus(account: Account): AccountStatus {
  if (account.closedAt !== null) return 'closed';
  return account.disabled ? 'disabled' : 'active';
}

/**
 * Rate limits set on an account (issue 5). Each value is `null` (the server default:
 * RATE_LIMIT_PER_SECOND / RATE_LIMIT_PER_DAY), `0` (no limit for this account, whatever the
 * default) or N >= 1 (at most N requests per window; src/rate-limit/rate-limiter.ts).
 */
export interface AccountRateLimits {
  readonly perSecond: number | null;
  readonly perDay: number | null;
}

export function toAccount(row: Selectable<AccountsTable>, keys: readonly LiveKeyRow[]): Account {
  return {
    id: row.id,
    username: row.username,
    apiKeys: keys.map(toLiveKey),
    credits: row.credits,
    disabled: row.disabled !== 0,
    requireApiKey: row.require_api_key !== 0,
    createdAt: row.created_at,
    rateLimits: { perSecond: row.rate_limit_per_second, perDay: row.rate_limit_per_day },
    closedAt: row.closed_at,
  };
}

/** Usernames: 1 to 64 characters of letters, digits and . _ @ - (they appear in URLs and logs). */
export const USERNAME_PATTERN = /^[A-Za-z0-9._@-]{1,64}$/;


function toLiveKey(k: LiveKeyRow): LiveKey {
  const base = { id: k.id, hash: Buffer.from(k.key_hash, 'hex'), expiresAtMs: k.expires_at === null ? null : Date.parse(k.expires_at) };
  const rules = compileRules(k.id, k.name, settingsOf(k));
  return rules === undefined ? base : { ...base, rules };
}
