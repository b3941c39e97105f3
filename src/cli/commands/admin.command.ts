import type { Command } from 'commander';
import { UserError, type OperatorRole } from '../../users/user.service.js';
import { CliError, parsePositiveInt, withServices, type CliOutput } from '../cli-context.js';

/** `admin create NAME --role admin|viewer [--invite]` and `audit` (issue 16). */
export function registerAdminCommands(program: Command, env: NodeJS.ProcessEnv, io: CliOutput): void {
  program
    .command('admin')
    .description('operators of the admin API')
    .command('create')
    .argument('<name>', 'user name (letters, digits, . _ @ -)')
    .option('--role <role>', 'admin (reads and changes) or viewer (reads)', 'admin')
    .option('--invite', 'print an invite link secret instead of a one-time password')
    .option('--json', 'machine-readable output')
    .description('create an operator; prints a one-time password (changed at first login) or an invite token')
    .action(async (name: string, opts: { role: string; invite?: boolean; json?: boolean }) => {
      if (opts.role !== 'admin' && opts.role !== 'viewer') throw new CliError(`--role must be admin or viewer (got "${opts.role}")`);
      const role: OperatorRole = opts.role;
      try {
        const created = await withServices(
          env,
          (s) => s.users.createOperator(name, role, opts.invite === true),
          io,
        );
        if (opts.json) {
          io.out(JSON.stringify({ name: created.user.name, role: created.user.role, ...(created.password ? { password: created.password } : {}), ...(created.inviteToken ? { inviteToken: created.inviteToken } : {}) }));
        } else if (created.password !== undefined) {
          io.out(`Created ${role} ${name}.\nOne-time password (shown only this once; it must be changed at first login): ${created.password}`);
        } else {
          io.out(`Created ${role} ${name}.\nInvite token (shown only this once, valid 7 days): ${created.inviteToken ?? ''}\nSet the password with POST /admin/api/invite/accept {"token": "...", "password": "..."}`);
        }
      } catch (error) {
        if (error instanceof UserError) throw new CliError(error.message);
        throw error;
      }
    });

  program
    .command('audit')
    .description('list the audit log, newest first')
    .option('--actor <name>', 'only changes made by this user, token or CLI user')
    .option('--action <action>', 'only this action (e.g. account.update, key.revoke)')
    .option('--target <name>', 'only changes to this account, user or token')
    .option('--since <date>', 'only rows from this date or time on')
    .option('--limit <n>', 'at most N rows', '100')
    .option('--json', 'machine-readable output: the rows')
    .action(async (opts: { actor?: string; action?: string; target?: string; since?: string; limit: string; json?: boolean }) => {
      const limit = parsePositiveInt(opts.limit, '--limit');
      const from = opts.since === undefined ? undefined : new Date(Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(opts.since) ? `${opts.since}T00:00:00Z` : opts.since));
      if (from !== undefined && Number.isNaN(from.getTime())) throw new CliError(`--since must be a date such as 2026-11-01 (got "${opts.since ?? ''}")`);
      const rows = await withServices(env, (s) => s.audit.list({ actor: opts.actor, action: opts.action, target: opts.target, from: from?.toISOString(), limit: Math.min(limit, 10_000) }), io);
      if (opts.json) {
        io.out(JSON.stringify(rows));
        return;
      }
      if (rows.length === 0) {
        io.out('No audit rows.');
        return;
      }
      for (const r of rows) {
        const change = [r.before ? `before ${JSON.stringify(r.before)}` : '', r.after ? `after ${JSON.stringify(r.after)}` : ''].filter(Boolean).join(' ');
        io.out(`${r.at}  ${r.actor.kind}:${r.actor.name}${r.actor.address ? `@${r.actor.address}` : ''}  ${r.action}  ${r.targetKind}:${r.target}  ${change}`);
      }
    });
}
