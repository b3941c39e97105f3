import type { Command } from 'commander';
import { CliError, CliExit, withServices, type CliOutput } from '../cli-context.js';

export function registerImportCommand(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  program
    .command('import')
    .argument('<file>', 'JSON Lines file, one record per line (see docs/import-format.md)')
    .option('--skip-invalid', 'import the valid lines even if some lines are invalid')
    .option('--source <name>', 'source name recorded with the records', 'import')
    .option('--json', 'machine-readable summary')
    .description('import vehicle, MOT and Euro NCAP records; re-importing a key replaces it')
    .action(async (file: string, opts: { json?: boolean; skipInvalid?: boolean; source: string }) => {
      const errors: Array<{ line: number; reason: string }> = [];
      const started = Date.now();
      // An object, not a let: the flag is set inside a callback the type-checker cannot follow.
      const progress = { drew: false };
      const summary = await withServices(env, (s) =>
        s.importer.importFile(file, {
          skipInvalid: opts.skipInvalid === true,
          source: opts.source,
          onInvalid: (line, reason) => {
            if (opts.json) errors.push({ line, reason });
            else io.err(`line ${line}: ${reason}`);
          },
          onProgress: (lines, phase) => {
            if (!io.interactive || opts.json) return;
            const seconds = (Date.now() - started) / 1000;
            io.progress(`${phase}: ${lines} lines (${Math.round(lines / Math.max(seconds, 0.001))}/s)`);
            progress.drew = true;
          },
        }),
      ).catch((error: unknown) => {
        if (error instanceof Error && 'code' in error && error.code === 'ENOENT') throw new CliError(`cannot read ${file}: no such file`);
        throw error;
      });
      if (progress.drew) io.err('');
      if (opts.json) {
        io.out(JSON.stringify({ ...summary, errors }));
      } else if (summary.committed) {
        const parts = Object.entries(summary.byOperation).map(([op, n]) => `${op} ${n}`);
        io.out(`Imported ${summary.imported} records${summary.invalid > 0 ? `, skipped ${summary.invalid} invalid lines` : ''}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}.`);
      } else {
        io.err(`Nothing imported: ${summary.invalid} invalid line${summary.invalid === 1 ? '' : 's'} (fix them or use --skip-invalid).`);
      }
      if (!summary.committed) throw new CliExit(1);
    });
}
