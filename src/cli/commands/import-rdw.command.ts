import type { Command } from 'commander';
import { CsvFileError } from '../../datasets/import/csv-reader.js';
import { RdwCsvImporter, type RdwFile, type RdwPhase } from '../../datasets/import/rdw-csv-importer.js';
import { systemClock } from '../../shared/clock.js';
import { CliError, CliExit, withServices, type CliOutput } from '../cli-context.js';

/** Errors listed in --json output at most; the rest are counted (the file may be all bad). */
export const MAX_JSON_ERRORS = 1000;

const PHASE_LABEL: Record<RdwPhase, string> = { fuel: 'indexing fuel', checking: 'checking', importing: 'importing' };

/** Reads a missing-file error as one clear line; other errors pass unchanged. */
export function fileError(error: unknown, fallbackPath: string): unknown {
  if (error instanceof Error && 'code' in error && error.code === 'ENOENT') {
    const path = 'path' in error && typeof error.path === 'string' ? error.path : fallbackPath;
    return new CliError(`cannot read ${path}: no such file`);
  }
  return error;
}

export function registerImportRdwCommand(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  program
    .command('import-rdw')
    .argument('<file>', 'RDW "Gekentekende voertuigen" CSV export (see docs/import-format.md)')
    .option('--fuel <file>', 'RDW "Gekentekende voertuigen brandstof" CSV export, joined by Kenteken for FuelType')
    .option('--skip-invalid', 'import the valid rows even if some rows are invalid')
    .option('--source <name>', 'source name recorded with the records', 'rdw')
    .option('--json', 'machine-readable summary')
    .description('import the RDW register for CheckNetherlands; unchanged records are left as they are')
    .action(async (file: string, opts: { fuel?: string; json?: boolean; skipInvalid?: boolean; source: string }) => {
      const errors: Array<{ file: RdwFile; line: number; reason: string }> = [];
      // Objects, not lets: they change inside callbacks the type-checker cannot follow.
      const progress = { drew: false, phase: undefined as RdwPhase | undefined, since: Date.now() };
      const summary = await withServices(env, (s) =>
        new RdwCsvImporter(s.storage, s.records, s.catalogue, systemClock).importFile(file, {
          skipInvalid: opts.skipInvalid === true,
          source: opts.source,
          fuelPath: opts.fuel,
          onInvalid: (which, line, reason) => {
            if (opts.json) {
              if (errors.length < MAX_JSON_ERRORS) errors.push({ file: which, line, reason });
            } else io.err(`${which === 'fuel' ? 'fuel ' : ''}line ${line}: ${reason}`);
          },
          onProgress: ({ phase, rows, bytesRead, size }) => {
            if (!io.interactive || opts.json) return;
            if (phase !== progress.phase) {
              progress.phase = phase;
              progress.since = Date.now();
            }
            const seconds = Math.max((Date.now() - progress.since) / 1000, 0.001);
            const percent = size > 0 ? Math.min(100, Math.floor((bytesRead / size) * 100)) : 100;
            io.progress(`${PHASE_LABEL[phase]}: ${rows} rows, ${percent}% (${Math.round(rows / seconds)} rows/s)`);
            progress.drew = true;
          },
        }),
      ).catch((error: unknown) => {
        if (error instanceof CsvFileError) throw new CliError(error.message);
        throw fileError(error, file);
      });
      if (progress.drew) io.err('');
      if (opts.json) {
        io.out(JSON.stringify({ ...summary, errors, errorsOmitted: Math.max(0, summary.invalid - errors.length) }));
      } else if (summary.committed) {
        const details = [`${summary.written} new or changed`, `${summary.unchanged} unchanged`];
        if (summary.fuel) details.push(`${summary.withFuel} with a fuel type`);
        const skipped = summary.invalid > 0 ? `, skipped ${summary.invalid} invalid row${summary.invalid === 1 ? '' : 's'}` : '';
        io.out(`Imported ${summary.imported} CheckNetherlands records (${details.join(', ')})${skipped}.`);
      } else {
        io.err(`Nothing imported: ${summary.invalid} invalid row${summary.invalid === 1 ? '' : 's'} (fix them or use --skip-invalid).`);
      }
      if (!summary.committed) throw new CliExit(1);
    });
}
