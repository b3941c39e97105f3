import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { loadCoreConfig, type CoreConfig } from '../../config/config.js';
import { isPostgresUrl, openStorage, type Storage } from '../../storage/create-database.js';
import { copyStore, rowsText, StoreCopyError, type StoreCopySummary } from '../../storage/store-copy.js';
import { CliError, CliExit, parsePositiveInt, type CliOutput } from '../cli-context.js';

interface MigrateStoreOptions {
  to: string;
  from?: string;
  batchSize: string;
  json?: boolean;
}

/** The SQLite file to copy: --from, else the configured store (DATABASE_URL when SQLite, else DATA_DIR's). */
function sourcePath(from: string | undefined, config: CoreConfig): string {
  const given = from ?? config.databaseUrl;
  if (given !== undefined && isPostgresUrl(given)) {
    throw new CliError(
      from === undefined
        ? 'DATABASE_URL names a PostgreSQL database; name the SQLite store to copy with --from (a file path or sqlite: URL)'
        : '--from must be an embedded SQLite store (a file path or sqlite: URL), not a PostgreSQL URL',
    );
  }
  if (given === undefined) return join(config.dataDir, 'vehicle-lookup.sqlite');
  if (given === ':memory:') throw new CliError('--from must be a SQLite file; an in-memory store has nothing to copy');
  return given.replace(/^(sqlite|file):(\/\/)?/, '');
}

function printSummary(io: CliOutput, summary: StoreCopySummary, source: Storage, target: Storage): void {
  const width = Math.max(...summary.tables.map((t) => t.table.length));
  io.out(
    [
      `Copied ${source.description} to ${target.description} and verified the copy:`,
      ...summary.tables.map((t) => `  ${t.table.padEnd(width)} ${rowsText(t.rows).padStart(15)}`),
      `${summary.accounts} account${summary.accounts === 1 ? '' : 's'} holding ${summary.credits} credits in all; on both sides each balance equals the sum of its account's ledger rows (${rowsText(summary.ledgerRows)} copied).`,
      summary.identities.length === 0 ? 'No ids to carry over.' : `Next ids: ${summary.identities.map((i) => `${i.table}.${i.column} ${i.nextId}`).join(', ')}.`,
      'Point DATABASE_URL at the target and start the servers (docs/scaling.md).',
    ].join('\n'),
  );
}

export function registerMigrateStoreCommand(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  program
    .command('migrate-store')
    .requiredOption('--to <url>', 'the PostgreSQL database to copy into (postgres://user:password@host:5432/db); must be empty')
    .option('--from <sqlite>', 'the SQLite store to copy (file path or sqlite: URL); default: the configured store')
    .option('--batch-size <rows>', 'rows read and inserted per statement', '500')
    .option('--json', 'machine-readable summary')
    .description('copy an embedded SQLite store (accounts, ledger, records, everything) into an empty PostgreSQL database, then verify it')
    .action(async (opts: MigrateStoreOptions) => {
      if (!isPostgresUrl(opts.to)) throw new CliError(`--to must be a postgres:// or postgresql:// URL (got "${opts.to}")`);
      const batchRows = parsePositiveInt(opts.batchSize, '--batch-size');
      const config = loadCoreConfig(env);
      const path = sourcePath(opts.from, config);
      // openStorage would create an empty store for a mistyped path and copy nothing.
      if (!existsSync(path)) throw new CliError(`no SQLite store at ${path}`);

      const started = Date.now();
      const progress = { drew: false };
      // Opening brings both schemas to the latest migration, so they can be compared table by table.
      const source = await openStorage({ dataDir: config.dataDir, databaseUrl: path });
      try {
        const target = await openStorage({ dataDir: config.dataDir, databaseUrl: opts.to, poolSize: 2 });
        try {
          const summary = await copyStore(source, target, {
            batchRows,
            onProgress: (table, copied, total) => {
              if (!io.interactive || opts.json === true) return;
              io.progress(`${table}: ${copied}/${total} rows`);
              progress.drew = true;
            },
          }).catch((error: unknown) => {
            if (error instanceof StoreCopyError) throw new CliError(`migrate-store refused: ${error.message}`);
            throw error;
          });
          if (progress.drew) io.err('');
          if (opts.json === true) {
            io.out(
              JSON.stringify({
                source: source.description,
                target: target.description,
                tables: Object.fromEntries(summary.tables.map((t) => [t.table, t.rows])),
                accounts: summary.accounts,
                credits: summary.credits,
                ledgerRows: summary.ledgerRows,
                nextIds: Object.fromEntries(summary.identities.map((i) => [`${i.table}.${i.column}`, i.nextId])),
                verified: true,
                sourceChangedDuringCopy: summary.sourceChangedDuringCopy,
                seconds: (Date.now() - started) / 1000,
              }),
            );
          } else {
            printSummary(io, summary, source, target);
          }
          if (summary.sourceChangedDuringCopy) {
            // The target is a consistent snapshot, but switching to it would lose what was written since.
            io.err(
              'warning: something wrote to the source store during the copy; those changes are not in the target. ' +
                'Stop every server and CLI using the source, re-create the target database, and run migrate-store again.',
            );
            throw new CliExit(1);
          }
        } finally {
          await target.close();
        }
      } finally {
        await source.close();
      }
    });
}
