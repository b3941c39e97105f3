import type { Command } from 'commander';
import { parsePositiveInt, parseSince, withServices, type CliOutput } from '../cli-context.js';

export function registerCreditCommands(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  program
    .command('credits')
    .description('top up an account')
    .command('add')
    .argument('<name>', 'username')
    .argument('<n>', 'credits to add')
    .option('--note <text>', 'note recorded on the ledger row')
    .option('--reference <ref>', 'the reference of the grant (an invoice, a ticket): a repeat of it grants nothing and answers the first grant')
    .option('--json', 'machine-readable output')
    .description('add credits; the top-up is a ledger row')
    .action(async (name: string, n: string, opts: { json?: boolean; note?: string; reference?: string }) => {
      const amount = parsePositiveInt(n, 'the number of credits');
      const { credits, replayed } = await withServices(env, (s) => s.accounts.grantCredits({ account: name, amount, reference: opts.reference, note: opts.note }), io);
      if (opts.json) io.out(JSON.stringify({ username: name, added: replayed ? 0 : amount, credits, ...(replayed ? { replayed } : {}) }));
      else if (replayed) io.out(`Reference ${opts.reference ?? ''} was granted already; nothing added. Balance after that grant: ${credits}.`);
      else io.out(`Added ${amount} credits to ${name}; balance ${credits}.`);
    });

  program
    .command('usage')
    .argument('<name>', 'username')
    .option('--since <date>', 'only rows from this date or time on (e.g. 2026-11-01)')
    .option('--key <name>', "only the lookups of the account's API key of this name")
    .option('--json', 'machine-readable output: the ledger rows')
    .description("show an account's ledger: charged and free lookups, top-ups and removals")
    .action(async (name: string, opts: { json?: boolean; since?: string; key?: string }) => {
      const since = opts.since === undefined ? undefined : parseSince(opts.since);
      const rows = await withServices(env, (s) => s.accounts.usage(name, since, opts.key));
      if (opts.json) {
        io.out(JSON.stringify(rows));
        return;
      }
      if (rows.length === 0) {
        io.out(`No ledger rows for ${name}${since === undefined ? '' : ` since ${since}`}.`);
        return;
      }
      io.out(['time                      delta  balance  kind    interface  operation             query'].join('\n'));
      for (const r of rows) {
        io.out(
          `${r.createdAt.padEnd(25)} ${String(r.delta).padStart(6)} ${String(r.balanceAfter).padStart(8)}  ${r.kind.padEnd(7)} ${(r.interface ?? '').padEnd(10)} ${(r.operation ?? '').padEnd(21)} ${r.query ?? ''}${r.freeReason === null ? '' : ` (free: ${r.freeReason})`}${r.key === null ? '' : `  key ${r.key}`}`,
        );
      }
      // A reversal (an answer that could not be delivered) gives one debit back: it counts neither as charged nor in the credits.
      const charged = rows.filter((r) => r.kind === 'debit' || r.kind === 'reversal');
      const reversed = rows.filter((r) => r.kind === 'reversal').length;
      const free = rows.filter((r) => r.kind === 'free').length;
      // Free lookups (test plates, empty results, Idempotency-Key replays) have rows of their own, delta 0.
      io.out(
        `${charged.length - 2 * reversed} lookups charged, ${-charged.reduce((sum, r) => sum + r.delta, 0)} credits${free === 0 ? '' : `; ${free} free`}${reversed === 0 ? '' : `; ${reversed} given back (answer not delivered)`}.`,
      );
    });
}
