import type { Command } from 'commander';
import { SourceExport } from '../../datasets/export/source-export.js';
import { PAID_UPSTREAM_NAMES } from '../../datasets/kept-per-operation.js';
import { PAID_ANSWER_READERS } from '../../providers/paid-answers.js';
import { systemClock } from '../../shared/clock.js';
import { CliError, parseSince, withServices, type CliOutput } from '../cli-context.js';

const SOURCE_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * `vehicle-lookup export --source regcheck [--since DATE] > file.jsonl`: what the store and the
 * upstream answer cache hold from one source, as import lines (docs/import-format.md), for
 * `vehicle-lookup import` on another store (docs/providers.md "Record and replay"). A paid
 * upstream's cached payloads become the records of their operations through its reader
 * (PAID_ANSWER_READERS), without starting a provider.
 */
export function registerExportCommand(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  program
    .command('export')
    .requiredOption('--source <name>', `the source to export: records imported with it, and the answers its upstream provider cached (${PAID_UPSTREAM_NAMES.join(', ')})`)
    .option('--since <date>', 'only what was fetched or imported since this date (2026-11-01) or ISO time')
    .description('write what the store holds from one source as JSON Lines in the import format, on stdout')
    .action(async (opts: { source: string; since?: string }) => {
      if (!SOURCE_NAME.test(opts.source)) throw new CliError(`--source must be 1 to 64 letters, digits, ".", "_" or "-" (got "${opts.source}")`);
      const since = opts.since === undefined ? undefined : parseSince(opts.since);
      let count = 0;
      await withServices(env, async (s) => {
        for await (const line of new SourceExport(s.storage.db, s.catalogue, PAID_ANSWER_READERS).lines({ source: opts.source, since, now: systemClock.now() })) {
          io.out(JSON.stringify(line));
          count += 1;
        }
      });
      io.err(`Exported ${count} record${count === 1 ? '' : 's'} of source ${opts.source}.`);
    });
}
