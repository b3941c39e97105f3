import type { Selectable } from 'kysely';
import type { Clock } from '../shared/clock.js';
import type { AuditLogTable, Db, Tx } from '../storage/database.js';

/** Who made a change, and from where. */
export interface Actor {
  /** `operator` / `customer` (a login), `token` (an operator API token), `cli`, `system`. */
  readonly kind: 'operator' | 'customer' | 'token' | 'cli' | 'system';
  /** The user or token name; for the CLI, the operating-system user. */
  readonly name: string;
  /** The client address (API), or the host name (CLI). */
  readonly address?: string | undefined;
}

export const SYSTEM_ACTOR: Actor = { kind: 'system', name: 'system' };

export interface AuditEntry {
  readonly action: string;
  /** An account's own webhook endpoints and alert thresholds are recorded against the account; an operator endpoint is a `webhook-endpoint`. */
  readonly targetKind: 'account' | 'api-key' | 'user' | 'operator-token' | 'session' | 'test-plate' | 'webhook-endpoint' | 'import';
  readonly target: string;
  readonly before?: Record<string, unknown> | undefined;
  readonly after?: Record<string, unknown> | undefined;
}

export interface AuditRow extends AuditEntry {
  readonly id: number;
  readonly at: string;
  readonly actor: Actor;
}

export interface AuditFilter {
  readonly actor?: string | undefined;
  readonly action?: string | undefined;
  readonly targetKind?: string | undefined;
  readonly target?: string | undefined;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  /** Rows with a smaller id than this (paging backwards from the newest). */
  readonly before?: number | undefined;
  readonly limit: number;
}

/** Fields never written to the audit log, whatever a caller passes (defence in depth). */
const SECRET_FIELDS = new Set(['apiKey', 'apiKeys', 'secret', 'token', 'password', 'passwordHash', 'hash', 'keyHash', 'inviteUrl', 'csrfToken']);

function scrub(value: Record<string, unknown> | undefined): string | null {
  if (value === undefined) return null;
  return JSON.stringify(Object.fromEntries(Object.entries(value).filter(([k]) => !SECRET_FIELDS.has(k))));
}

function toRow(row: Selectable<AuditLogTable>): AuditRow {
  return {
    id: row.id,
    at: row.at,
    actor: { kind: row.actor_kind as Actor['kind'], name: row.actor, address: row.address ?? undefined },
    action: row.action,
    targetKind: row.target_kind as AuditEntry['targetKind'],
    target: row.target,
    before: row.before === null ? undefined : (JSON.parse(row.before) as Record<string, unknown>),
    after: row.after === null ? undefined : (JSON.parse(row.after) as Record<string, unknown>),
  };
}

/**
 * The append-only audit log (issue 16): every change made through the API or the CLI. This class
 * only inserts and reads; nothing in the code base updates or deletes its rows.
 */
export class AuditLog {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** Records one change; pass the change's transaction so both commit together. */
  async record(tx: Tx, actor: Actor, entry: AuditEntry): Promise<void> {
    await tx.db
      .insertInto('audit_log')
      .values({
        at: this.clock.now().toISOString(),
        actor_kind: actor.kind,
        actor: actor.name,
        action: entry.action,
        target_kind: entry.targetKind,
        target: entry.target,
        address: actor.address ?? null,
        before: scrub(entry.before),
        after: scrub(entry.after),
      })
      .execute();
  }

  /**
   * When `action` was recorded from `address` at or after `since`, oldest first, at most `limit`
   * times (a sign-up's per-address bound counts its own audit rows: one fact, kept once). Inside a
   * transaction, pass its `db`.
   */
  async timesFrom(db: Db, action: string, address: string, since: string, limit: number): Promise<string[]> {
    const rows = await db.selectFrom('audit_log').select('at').where('at', '>=', since).where('action', '=', action).where('address', '=', address).orderBy('at').limit(limit).execute();
    return rows.map((r) => r.at);
  }

  /** Newest first. */
  async list(filter: AuditFilter): Promise<AuditRow[]> {
    let query = this.db.selectFrom('audit_log').selectAll();
    if (filter.actor !== undefined) query = query.where('actor', '=', filter.actor);
    if (filter.action !== undefined) query = query.where('action', '=', filter.action);
    if (filter.targetKind !== undefined) query = query.where('target_kind', '=', filter.targetKind);
    if (filter.target !== undefined) query = query.where('target', '=', filter.target);
    if (filter.from !== undefined) query = query.where('at', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('at', '<', filter.to);
    if (filter.before !== undefined) query = query.where('id', '<', filter.before);
    const rows = await query.orderBy('id', 'desc').limit(filter.limit).execute();
    return rows.map(toRow);
  }
}
