import type { Command } from 'commander';
import type { Account } from '../../accounts/account.js';
import { parsePositiveInt, withServices, type CliOutput } from '../cli-context.js';

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

export function registerAccountCommands(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  const accounts = program.command('accounts').description('create and manage accounts and API keys');

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
