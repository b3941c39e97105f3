import type { Command } from 'commander';
import type { Catalogue } from '../../catalogue/catalogue.js';
import { testPlateKey } from '../../datasets/test-plate-key.js';
import { cliActor, CliError, withServices, type CliOutput } from '../cli-context.js';

/** Normalises the key values of a test plate exactly as a lookup would. */
function keyFor(catalogue: Catalogue, operation: string, values: readonly string[]): string {
  const outcome = testPlateKey(catalogue, operation, values);
  if (!outcome.ok) throw new CliError(outcome.reason);
  return outcome.key;
}

export function registerTestPlateCommands(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  const plates = program.command('test-plates').description('free test plates: they answer and cost no credit');

  plates
    .command('add')
    .argument('<operation>', 'operation name, e.g. CheckUSA')
    .argument('<values...>', 'the key values in parameter order, e.g. H84JAE NJ')
    .option('--json', 'machine-readable output')
    .action(async (operation: string, values: string[], opts: { json?: boolean }) => {
      await withServices(env, async (s) => {
        const key = keyFor(s.catalogue, operation, values);
        // The audit log names the operating-system user, as for the CLI's other changes.
        const added = await s.testPlates.add(operation, key, cliActor());
        io.out(opts.json ? JSON.stringify({ operation, key, added }) : added ? `${operation} ${key} is now a free test plate.` : `${operation} ${key} was a free test plate already.`);
      });
    });

  plates
    .command('remove')
    .argument('<operation>', 'operation name')
    .argument('<values...>', 'the key values in parameter order')
    .option('--json', 'machine-readable output')
    .action(async (operation: string, values: string[], opts: { json?: boolean }) => {
      await withServices(env, async (s) => {
        const key = keyFor(s.catalogue, operation, values);
        const removed = await s.testPlates.remove(operation, key, cliActor());
        io.out(opts.json ? JSON.stringify({ operation, key, removed }) : removed ? `${operation} ${key} costs credits again.` : `${operation} ${key} was not a test plate.`);
      });
    });

  plates
    .command('list')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const list = await withServices(env, (s) => s.testPlates.list());
      if (opts.json) io.out(JSON.stringify(list.map((p) => ({ operation: p.operation, key: p.lookupKey }))));
      else io.out(list.length === 0 ? 'No test plates.' : list.map((p) => `${p.operation} ${p.lookupKey}`).join('\n'));
    });
}
