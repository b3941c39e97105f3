import type { Command } from 'commander';
import type { CoreServices } from '../../services.js';
import { readDmrFile, DENMARK_OPERATION } from '../../datasets/import/dmr-register.js';
import {
  registerTarget,
  RegisterFileError,
  StagedRegisterImporter,
  type RegisterImportSummary,
  type RegisterProgress,
  type RegisterReadSummary,
  type RegisterSink,
} from '../../datasets/import/staged-register-importer.js';
import { readUkraineFiles, UKRAINE_OPERATION } from '../../datasets/import/ukraine-register.js';
import type { InputRule } from '../../catalogue/input-rules.js';
import { systemClock } from '../../shared/clock.js';
import { CliError, withServices, type CliOutput } from '../cli-context.js';
import { fileError } from './import-rdw.command.js';

/** `1h02m`, `3m20s`, `12s`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/**
 * The progress line of a register import: the phase, rows, share done, rows per second and an
 * estimate of the time left (from the share of bytes read while reading, of records while writing).
 * `now` is in milliseconds.
 */
export function progressLine(progress: RegisterProgress, startedMs: number, nowMs: number): string {
  const seconds = Math.max((nowMs - startedMs) / 1000, 0.001);
  const rate = progress.rows / seconds;
  const share = progress.total > 0 ? Math.min(1, progress.done / progress.total) : undefined;
  const eta = share !== undefined && share > 0 ? `, ETA ${duration((seconds / share) * (1 - share))}` : '';
  const percent = share === undefined ? '' : `, ${Math.floor(share * 100)}%`;
  return `${progress.phase}: ${progress.rows} records${percent} (${Math.round(rate)} rows/s${eta})`;
}

type Reader = (files: readonly string[], plateRule: InputRule, sink: RegisterSink) => Promise<RegisterReadSummary>;

/** Runs one staged register import for the CLI: progress on a terminal, the summary, clear errors. */
async function runImport(env: NodeJS.ProcessEnv, io: CliOutput, operation: string, files: readonly string[], read: Reader, opts: { source: string; json?: boolean }): Promise<void> {
  const progress = { drew: false, phase: undefined as RegisterProgress['phase'] | undefined, since: Date.now() };
  const summary: RegisterImportSummary = await withServices(env, (s: CoreServices) => {
    const target = registerTarget(s.catalogue, operation);
    return new StagedRegisterImporter(s.storage, s.records, systemClock, target.dataset).run((sink) => read(files, target.plateRule, sink), {
      source: opts.source,
      onProgress: (p) => {
        if (!io.interactive || opts.json === true) return;
        if (p.phase !== progress.phase) {
          progress.phase = p.phase;
          progress.since = Date.now();
        }
        io.progress(progressLine(p, progress.since, Date.now()));
        progress.drew = true;
      },
    });
  }).catch((error: unknown) => {
    if (progress.drew) io.err('');
    if (error instanceof RegisterFileError) throw new CliError(`${error.message}; nothing was imported`);
    throw fileError(error, files[0] ?? '');
  });
  if (progress.drew) io.err('');
  if (opts.json === true) {
    io.out(JSON.stringify(summary));
    return;
  }
  io.out(`Imported ${summary.records} ${operation} records from ${summary.rowsRead} rows (${summary.written} new or changed, ${summary.unchanged} unchanged).`);
  for (const [reason, count] of Object.entries(summary.skipped)) io.out(`Passed over ${count} row${count === 1 ? '' : 's'} ${reason}.`);
}

export function registerImportRegisterCommands(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  program
    .command('import-ukraine')
    .argument('<files...>', 'MVS registration-operations files from data.gov.ua: ZIP or CSV (see docs/import-format.md)')
    .option('--source <name>', 'source name recorded with the records', 'mvs-ukraine')
    .option('--json', 'machine-readable summary')
    .description('import Ukraine\'s registration operations for CheckUkraine: the latest operation of each plate; unchanged records are left as they are')
    .action(async (files: string[], opts: { source: string; json?: boolean }) => {
      await runImport(env, io, UKRAINE_OPERATION, files, (paths, rule, sink) => readUkraineFiles(paths, rule, sink), opts);
    });
  program
    .command('import-dmr')
    .argument('<file>', 'Danish DMR export ESStatistikListeModtag-*.zip (or its XML), see docs/import-format.md')
    .option('--source <name>', 'source name recorded with the records', 'dmr')
    .option('--json', 'machine-readable summary')
    .description('import Denmark\'s DMR register for CheckDenmark: the live record of each plate; unchanged records are left as they are')
    .action(async (file: string, opts: { source: string; json?: boolean }) => {
      await runImport(env, io, DENMARK_OPERATION, [file], (paths, rule, sink) => readDmrFile(paths[0] ?? '', rule, sink), opts);
    });
}
