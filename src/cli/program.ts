import { registerAdminCommands } from './commands/admin.command.js';
import { Command, CommanderError } from 'commander';
import { DomainError } from '../shared/domain-error.js';
import { ConfigError } from '../config/config.js';
import { CliError, CliExit, processOutput, type CliOutput } from './cli-context.js';
import { registerAccountCommands } from './commands/accounts.command.js';
import { registerCreditCommands } from './commands/credits.command.js';
import { registerExportCommand } from './commands/export.command.js';
import { registerImportCommand } from './commands/import.command.js';
import { registerImportNcapCommand } from './commands/import-ncap.command.js';
import { registerImportRdwCommand } from './commands/import-rdw.command.js';
import { registerImportRegisterCommands } from './commands/import-register.command.js';
import { registerLimitsCommand } from './commands/limits.command.js';
import { registerMigrateStoreCommand } from './commands/migrate-store.command.js';
import { registerTestPlateCommands } from './commands/test-plates.command.js';
import { registerVinCommands } from './commands/vin.command.js';

/** Builds the `vehicle-lookup` command tree; the CLI is an adapter over the same services. */
export function buildProgram(env: NodeJS.ProcessEnv, io: CliOutput): Command {
  const program = new Command('vehicle-lookup')
    .description('Operate a vehicle-lookup store (honours DATA_DIR and DATABASE_URL)')
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => { io.out(s.trimEnd()); }, writeErr: (s) => { io.err(s.trimEnd()); } })
    .exitOverride();
  registerAccountCommands(program, env, io);
  registerLimitsCommand(program, env, io);
  registerCreditCommands(program, env, io);
  registerImportCommand(program, env, io);
  registerImportRdwCommand(program, env, io);
  registerImportNcapCommand(program, env, io);
  registerImportRegisterCommands(program, env, io);
  registerExportCommand(program, env, io);
  registerTestPlateCommands(program, env, io);
  registerMigrateStoreCommand(program, env, io);
  registerVinCommands(program, env, io);
  registerAdminCommands(program, env, io);
  return program;
}

/** Runs the CLI; returns the exit code (0 ok, 1 failed, 2 usage error). */
export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv, io: CliOutput = processOutput): Promise<number> {
  const program = buildProgram(env, io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CliExit) return error.exitCode;
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof DomainError || error instanceof CliError || error instanceof ConfigError) {
      io.err(`vehicle-lookup: ${error.message}`);
      return 1;
    }
    io.err(`vehicle-lookup: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
