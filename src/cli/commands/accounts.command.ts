import type { Command } from 'commander';
import type { Account } from '../../accounts/account.js';
import type { ApiKeyInfo, ApiKeyWithSpend } from '../../accounts/api-key.repository.js';
import { CAP_PERIODS, KeyRuleError, parseLabel, type CapPeriod, type KeySettingsChange } from '../../accounts/key-rules.js';
import { CliError, parsePositiveInt, withServices, type CliOutput } from '../cli-context.js';

interface JsonFlag {
  json?: boolean;
}

function describe(account: Account): Record<string, unknown> {
  return {
    username: account.username,
    credits: account.credits,
    disabled: account.disabled,
    requireApiKey: account.requireApiKey,
    createdAt: account.createdAt,
  };
}

/** The key settings flags of `accounts add-key` and `accounts key` (issue 33). */
interface KeyFlags extends JsonFlag {
  cap?: string;
  capPeriod?: string;
  operations?: string;
  perSecond?: string;
  perDay?: string;
  allowIp?: string;
  label?: string[];
  clearCap?: boolean;
  clearOperations?: boolean;
  clearPerSecond?: boolean;
  clearPerDay?: boolean;
  clearAllowIp?: boolean;
  clearLabels?: boolean;
}

function keySettingsOptions(command: Command): Command {
  return command
    .option('--cap <n>', 'credit cap of the key per --cap-period')
    .option('--cap-period <period>', `the cap's period: ${CAP_PERIODS.join(', ')} (default month)`)
    .option('--operations <list>', 'comma list of operations the key may call: names, country:NAME, vin; "all" clears it')
    .option('--per-second <n>', "the key's own requests per second (inside the account's)")
    .option('--per-day <n>', "the key's own requests per UTC day (inside the account's)")
    .option('--allow-ip <cidrs>', 'comma list of CIDR blocks the key may be used from')
    .option('--label <key=value>', 'a label (repeatable)', (value: string, previous?: string[]) => [...(previous ?? []), value])
    .option('--clear-cap', 'remove the cap')
    .option('--clear-operations', 'allow every operation again')
    .option('--clear-per-second', "remove the key's per-second limit")
    .option('--clear-per-day', "remove the key's per-day limit")
    .option('--clear-allow-ip', 'allow any client address again')
    .option('--clear-labels', 'remove every label')
    .option('--json', 'machine-readable output');
}

const list = (text: string): string[] =>
  text
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');

/** The settings change the flags ask for; `current` is the key's (labels are added to its own). */
function settingsChangeOf(opts: KeyFlags, current?: ApiKeyInfo): KeySettingsChange {
  const change: { -readonly [K in keyof KeySettingsChange]: KeySettingsChange[K] } = {};
  const both = (set: unknown, clear: boolean | undefined, flag: string) => {
    if (set !== undefined && clear === true) throw new CliError(`give --${flag} or --clear-${flag}, not both`);
  };
  both(opts.cap, opts.clearCap, 'cap');
  both(opts.operations, opts.clearOperations, 'operations');
  both(opts.perSecond, opts.clearPerSecond, 'per-second');
  both(opts.perDay, opts.clearPerDay, 'per-day');
  both(opts.allowIp, opts.clearAllowIp, 'allow-ip');
  if (opts.capPeriod !== undefined && !CAP_PERIODS.includes(opts.capPeriod as CapPeriod)) throw new CliError(`--cap-period must be one of ${CAP_PERIODS.join(', ')}`);
  if (opts.cap !== undefined) change.cap = { credits: parsePositiveInt(opts.cap, '--cap'), period: (opts.capPeriod ?? current?.cap?.period ?? 'month') as CapPeriod };
  else if (opts.capPeriod !== undefined) {
    if (!current?.cap) throw new CliError('--cap-period needs --cap (the key has no cap)');
    change.cap = { credits: current.cap.credits, period: opts.capPeriod as CapPeriod };
  }
  if (opts.clearCap) change.cap = null;
  if (opts.operations !== undefined) change.operations = opts.operations.trim().toLowerCase() === 'all' ? null : list(opts.operations);
  if (opts.clearOperations) change.operations = null;
  if (opts.perSecond !== undefined) change.perSecond = parsePositiveInt(opts.perSecond, '--per-second');
  if (opts.clearPerSecond) change.perSecond = null;
  if (opts.perDay !== undefined) change.perDay = parsePositiveInt(opts.perDay, '--per-day');
  if (opts.clearPerDay) change.perDay = null;
  if (opts.allowIp !== undefined) change.allowedIps = list(opts.allowIp);
  if (opts.clearAllowIp) change.allowedIps = null;
  if (opts.clearLabels || opts.label !== undefined) {
    const labels: Record<string, string> = opts.clearLabels ? {} : { ...(current?.labels ?? {}) };
    try {
      for (const text of opts.label ?? []) {
        const [key, value] = parseLabel(text);
        labels[key] = value;
      }
    } catch (error) {
      if (error instanceof KeyRuleError) throw new CliError(error.message);
      throw error;
    }
    change.labels = labels;
  }
  return change;
}

/** One key as the CLI prints it (never its secret). */
function describeKey(key: ApiKeyInfo | ApiKeyWithSpend): string {
  const rules = [
    key.cap ? `cap ${key.cap.credits}/${key.cap.period}` : undefined,
    key.operations ? `operations ${key.operations.join(',')}` : undefined,
    key.perSecond !== null ? `${key.perSecond}/s` : undefined,
    key.perDay !== null ? `${key.perDay}/day` : undefined,
    key.allowedIps ? `from ${key.allowedIps.join(',')}` : undefined,
    Object.keys(key.labels).length > 0 ? `labels ${Object.entries(key.labels).map(([k, v]) => `${k}=${v}`).join(',')}` : undefined,
  ].filter((r) => r !== undefined);
  const state = key.revokedAt !== null ? 'revoked' : key.expiresAt !== null ? `expires ${key.expiresAt}` : 'live';
  const spend = 'spend' in key ? `  spent ${key.spend.credits} (${key.spend.periodKey})` : '';
  return `${String(key.id).padStart(4)}  ${key.name.padEnd(20)} ${(key.prefix ?? '').padEnd(10)} ${state.padEnd(8)}${spend}${rules.length > 0 ? `  ${rules.join('; ')}` : ''}`;
}

export function registerAccountCommands(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  const accounts = program.command('accounts').description('create and manage accounts and API keys');

  keySettingsOptions(accounts.command('add-key').argument('<account>', 'username').argument('<name>', 'the key name'))
    .description("add an API key with its own rules (cap, operations, rate limits, addresses, labels); prints the key once")
    .action(async (account: string, name: string, opts: KeyFlags) => {
      const change = settingsChangeOf(opts);
      const { key, apiKey } = await withServices(env, (s) => s.accounts.createKey(account, name, change), io);
      if (opts.json) io.out(JSON.stringify({ username: account, key, apiKey }));
      else io.out(`Created key ${key.name} for ${account}.\n${describeKey(key)}\nAPI key (shown only this once): ${apiKey}`);
    });

  keySettingsOptions(accounts.command('key').argument('<account>', 'username').argument('<name>', 'the key name'))
    .description("show an API key's rules and spend, or change those given (--clear-* removes one); audited")
    .action(async (account: string, name: string, opts: KeyFlags) => {
      const shown = await withServices(
        env,
        async (s) => {
          const key = await s.accounts.findKey(account, name);
          const change = settingsChangeOf(opts, key);
          if (Object.keys(change).length === 0) return key;
          await s.accounts.updateKey(account, key.id, change);
          return s.accounts.findKey(account, name);
        },
        io,
      );
      if (opts.json) io.out(JSON.stringify({ username: account, key: shown }));
      else io.out(describeKey(shown));
    });

  accounts
    .command('keys')
    .argument('<account>', 'username')
    .option('--json', 'machine-readable output')
    .description("list the account's API keys with their rules and spend this period (never their secrets)")
    .action(async (account: string, opts: JsonFlag) => {
      const keys = await withServices(env, (s) => s.accounts.listKeysWithSpend(account), io);
      if (opts.json) io.out(JSON.stringify({ username: account, keys }));
      else io.out(keys.length === 0 ? `Account ${account} has no keys.` : keys.map(describeKey).join('\n'));
    });

  accounts
    .command('create')
    .argument('<name>', 'username')
    .option('--credits <n>', 'initial credits', '0')
    .option('--json', 'machine-readable output')
    .description('create an account; prints its API key once')
    .action(async (name: string, opts: JsonFlag & { credits: string }) => {
      const credits = parsePositiveInt(opts.credits, '--credits', true);
      const { account, apiKey } = await withServices(env, (s) => s.accounts.create(name, credits));
      if (opts.json) io.out(JSON.stringify({ username: account.username, apiKey, credits: account.credits }));
      else io.out(`Created account ${account.username} with ${account.credits} credits.\nAPI key (shown only this once): ${apiKey}`);
    });

  accounts
    .command('show')
    .argument('<name>', 'username')
    .option('--json', 'machine-readable output')
    .description('show an account')
    .action(async (name: string, opts: JsonFlag) => {
      const account = await withServices(env, (s) => s.accounts.show(name));
      if (opts.json) io.out(JSON.stringify(describe(account)));
      else
        io.out(
          [
            `username:        ${account.username}`,
            `credits:         ${account.credits}`,
            `disabled:        ${account.disabled ? 'yes' : 'no'}`,
            `require API key: ${account.requireApiKey ? 'yes (XML bindings too)' : 'JSON interface only'}`,
            `created:         ${account.createdAt}`,
          ].join('\n'),
        );
    });

  accounts
    .command('rotate-key')
    .argument('<name>', 'username')
    .option('--json', 'machine-readable output')
    .description('replace the API key; the old key stops working at once')
    .action(async (name: string, opts: JsonFlag) => {
      const apiKey = await withServices(env, (s) => s.accounts.rotateKey(name), io);
      if (opts.json) io.out(JSON.stringify({ username: name, apiKey }));
      else io.out(`New API key for ${name} (shown only this once): ${apiKey}`);
    });

  for (const [command, disabled, text] of [
    ['disable', true, 'refuse every lookup of the account'],
    ['enable', false, 'allow lookups again'],
  ] as const) {
    accounts
      .command(command)
      .argument('<name>', 'username')
      .option('--json', 'machine-readable output')
      .description(text)
      .action(async (name: string, opts: JsonFlag) => {
        const account = await withServices(env, (s) => s.accounts.setDisabled(name, disabled), io);
        if (opts.json) io.out(JSON.stringify(describe(account)));
        else io.out(`Account ${account.username} ${disabled ? 'disabled' : 'enabled'}.`);
      });
  }

  accounts
    .command('require-api-key')
    .argument('<name>', 'username')
    .option('--off', 'stop requiring it')
    .option('--json', 'machine-readable output')
    .description('require the API key (HTTP Basic) on the SOAP and GET/POST bindings as well')
    .action(async (name: string, opts: JsonFlag & { off?: boolean }) => {
      const account = await withServices(env, (s) => s.accounts.setRequireApiKey(name, opts.off !== true), io);
      if (opts.json) io.out(JSON.stringify(describe(account)));
      else io.out(`Account ${account.username} ${account.requireApiKey ? 'now requires' : 'no longer requires'} its API key on every binding.`);
    });
}
