import type { Command } from 'commander';
import { CsvFileError } from '../../datasets/import/csv-reader.js';
import { NcapFileError, NcapFileImporter } from '../../datasets/import/ncap-file-importer.js';
import { RecordValidator } from '../../datasets/import/record-validator.js';
import { systemClock } from '../../shared/clock.js';
import { CliError, CliExit, withServices, type CliOutput } from '../cli-context.js';
import { fileError, MAX_JSON_ERRORS } from './import-rdw.command.js';

export function registerImportNcapCommand(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  program
    .command('import-ncap')
    .argument('<file>', 'JSON array of PreAssessmentSearchResult objects, or CSV with those column names')
    .option('--skip-invalid', 'import the valid ratings even if some are invalid')
    .option('--source <name>', 'source name recorded with the ratings', 'ncap')
    .option('--json', 'machine-readable summary')
    .description('import Euro NCAP ratings you are licensed to use; re-importing a rating replaces it')
    .action(async (file: string, opts: { json?: boolean; skipInvalid?: boolean; source: string }) => {
      const errors: Array<{ line: number; item?: number; reason: string }> = [];
      const summary = await withServices(env, (s) =>
        new NcapFileImporter(new RecordValidator(s.catalogue), s.records, s.storage, systemClock).importFile(file, {
          skipInvalid: opts.skipInvalid === true,
          source: opts.source,
          onInvalid: (line, item, reason) => {
            if (opts.json) {
              if (errors.length < MAX_JSON_ERRORS) errors.push({ line, ...(item === undefined ? {} : { item }), reason });
            } else io.err(`line ${line}${item === undefined ? '' : ` (item ${item})`}: ${reason}`);
          },
        }),
      ).catch((error: unknown) => {
        if (error instanceof NcapFileError || error instanceof CsvFileError) throw new CliError(error.message);
        throw fileError(error, file);
      });
      if (opts.json) {
        io.out(JSON.stringify({ ...summary, errors, errorsOmitted: Math.max(0, summary.invalid - errors.length) }));
      } else if (summary.committed) {
        const skipped = summary.invalid > 0 ? `, skipped ${summary.invalid} invalid rating${summary.invalid === 1 ? '' : 's'}` : '';
        io.out(`Imported ${summary.imported} Euro NCAP ratings from ${summary.format.toUpperCase()}${skipped}.`);
      } else {
        io.err(`Nothing imported: ${summary.invalid} invalid rating${summary.invalid === 1 ? '' : 's'} (fix them or use --skip-invalid).`);
      }
      if (!summary.committed) throw new CliExit(1);
    });
}
