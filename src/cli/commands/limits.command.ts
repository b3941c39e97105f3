import type { Command } from 'commander';
import type { AccountRateLimits } from '../../accounts/account.js';
import { MAX_RATE_PER_DAY, MAX_RATE_PER_SECOND } from '../../accounts/account.service.js';
import { effectiveLimits, type RateLimitDefaults } from '../../rate-limit/rate-limiter.js';
import { CliError, parsePositiveInt, withServices, type CliOutput } from '../cli-context.js';

interface LimitsOptions {
  perSecond?: string;
  perDay?: string;
  off?: boolean;
  default?: boolean;
  json?: boolean;
}

function parseLimit(text: string, option: string, max: number): number {
  const value = parsePositiveInt(text, option, true);
  if (value > max) throw new CliError(`${option} must be at most ${max} (0: no limit for this account)`);
  return value;
}

/** The change the options ask for; undefined when they ask for none (show the limits). */
function requestedChange(opts: LimitsOptions): Partial<AccountRateLimits> | undefined {
  const numbers = opts.perSecond !== undefined || opts.perDay !== undefined;
  if ([numbers, opts.off === true, opts.default === true].filter(Boolean).length > 1) {
    throw new CliError('give either --per-second / --per-day, or --off, or --default');
  }
  if (opts.off) return { perSecond: 0, perDay: 0 };
  if (opts.default) return { perSecond: null, perDay: null };
  if (!numbers) return undefined;
  return {
    ...(opts.perSecond !== undefined ? { perSecond: parseLimit(opts.perSecond, '--per-second', MAX_RATE_PER_SECOND) } : {}),
    ...(opts.perDay !== undefined ? { perDay: parseLimit(opts.perDay, '--per-day', MAX_RATE_PER_DAY) } : {}),
  };
}

function describeLimit(own: number | null, fallback: number | null, variable: string): string {
  if (own === null) return fallback === null ? 'none' : `${fallback} (server default ${variable})`;
  if (own === 0) return fallback === null ? 'none' : `none (exempt from the server default ${variable}=${fallback})`;
  return String(own);
}

/** `accounts limits NAME [--per-second N] [--per-day N] [--off | --default]` (issue 5). */
export function registerLimitsCommand(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  const accounts = program.commands.find((c) => c.name() === 'accounts') ?? program.command('accounts');
  accounts
    .command('limits')
    .argument('<name>', 'username')
    .option('--per-second <n>', 'at most N lookups per second (0: no per-second limit for this account)')
    .option('--per-day <n>', 'at most N lookups per UTC day (0: no per-day limit for this account)')
    .option('--off', 'no rate limits for this account, whatever the server defaults')
    .option('--default', 'follow the server defaults again (RATE_LIMIT_PER_SECOND, RATE_LIMIT_PER_DAY)')
    .option('--json', 'machine-readable output')
    .description('show or set the rate limits of an account; without options, show them')
    .action(async (name: string, opts: LimitsOptions) => {
      const change = requestedChange(opts);
      const { account, config } = await withServices(
        env,
        async (s, config) => ({ account: change ? await s.accounts.setRateLimits(name, change) : await s.accounts.show(name), config }),
        io,
      );
      const defaults: RateLimitDefaults = config.rateLimitDefaults;
      const own = account.rateLimits;
      if (opts.json) {
        io.out(JSON.stringify({ username: account.username, account: own, effective: effectiveLimits(own, defaults) }));
        return;
      }
      io.out(
        [
          `Rate limits of ${account.username}${change ? ' (updated)' : ''}:`,
          `  per second:  ${describeLimit(own.perSecond, defaults.perSecond, 'RATE_LIMIT_PER_SECOND')}`,
          `  per UTC day: ${describeLimit(own.perDay, defaults.perDay, 'RATE_LIMIT_PER_DAY')}`,
          config.redisUrl === undefined
            ? 'Counted by each instance on its own (REDIS_URL is not set).'
            : 'Counted in Redis, shared by every instance.',
        ].join('\n'),
      );
    });
}
