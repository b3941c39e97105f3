import { hash, randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import { SIGNUP_AUDIT_ACTION, type AccountService } from '../accounts/account.service.js';
import type { Account } from '../accounts/account.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/domain-error.js';
import type { Storage } from '../storage/create-database.js';
import type { Db, UsersTable } from '../storage/database.js';
import { DUMMY_PASSWORD_HASH, hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, oneTimePassword, verifyPassword } from './password.js';

export type OperatorRole = 'admin' | 'viewer';
export type CustomerRole = 'owner' | 'member';
export type Role = OperatorRole | CustomerRole;

/** A user as the API shows it. */
export interface User {
  readonly id: number;
  readonly name: string;
  readonly role: Role;
  /** The customer's account (its username); null for operators. */
  readonly account: string | null;
  readonly accountId: number | null;
  readonly mustChangePassword: boolean;
  readonly disabled: boolean;
  readonly createdAt: string;
  /** False until the user has set a password (an open invite). */
  readonly active: boolean;
}

export interface OperatorToken {
  readonly id: number;
  readonly name: string;
  readonly prefix: string;
  readonly scope: 'read' | 'write';
  readonly createdBy: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

export type UserErrorCode = 'NOT_FOUND' | 'ALREADY_EXISTS' | 'INVALID' | 'FORBIDDEN';

export class UserError extends DomainError<UserErrorCode> {
  override readonly name = 'UserError';
}

/**
 * A sign-up refused because its address reached SIGNUP_PER_ADDRESS_PER_DAY within 24 hours;
 * `retryAfterSeconds` is when the oldest of those sign-ups leaves the window.
 */
export class SignUpLimitError extends Error {
  override readonly name = 'SignUpLimitError';
  constructor(
    readonly limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`at most ${limit} sign-up${limit === 1 ? '' : 's'} from one address in 24 hours; retry in ${retryAfterSeconds} s`);
  }
}

/** An invite link's user and state (UserService.invitation). */
export interface Invitation {
  readonly user: User;
  /** open: the password can be set; used: it was; expired: INVITE_TTL_MS passed first. */
  readonly state: 'open' | 'used' | 'expired';
  readonly expiresAt: string;
  readonly usedAt: string | null;
}

/** What a self-service sign-up asks for, and the operator's terms (Config.signup). */
export interface SignUpRequest {
  readonly username: string;
  readonly password: string;
  /** The client's address: recorded in the audit rows, and what the per-day bound counts. */
  readonly address: string;
  readonly trialCredits: number;
  readonly perAddressPerDay: number;
}

/** The window of the per-address sign-up bound. */
export const SIGNUP_WINDOW_MS = 24 * 3600_000;

/** User names: 1 to 64 letters, digits and . _ @ - (an e-mail address fits). */
export const USER_NAME_PATTERN = /^[A-Za-z0-9._@-]{1,64}$/;
/** How long a session lasts without being renewed by a new login. */
export const SESSION_TTL_MS = 12 * 3600_000;
export const INVITE_TTL_MS = 7 * 24 * 3600_000;

const sha256 = (text: string): string => hash('sha256', text, 'hex');
const secret = (): string => randomBytes(32).toString('base64url');

type UserRow = Selectable<UsersTable> & { account_name: string | null };

function toUser(row: UserRow): User {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    account: row.account_name,
    accountId: row.account_id,
    mustChangePassword: row.must_change_password !== 0,
    disabled: row.disabled !== 0,
    createdAt: row.created_at,
    active: row.password_hash !== null,
  };
}

/**
 * Operators and customers' users, their passwords, server-side sessions, invites and operator API
 * tokens (issue 16).
 *
 * Sessions live in the store, not in an encrypted cookie: every instance sharing the store sees
 * the same sessions, "log out everywhere" is one delete, and a revoked session (or a disabled user)
 * is refused on the very next request, which a self-contained cookie could not offer before it
 * expires. The cookie carries a random session id; the store keeps only its SHA-256.
 */
export class UserService {
  constructor(
    private readonly storage: Pick<Storage, 'db' | 'transaction' | 'serialize'>,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly accounts: AccountService,
    private readonly actor: Actor = { kind: 'system', name: 'system' },
  ) {}

  withActor(actor: Actor): UserService {
    return new UserService(this.storage, this.clock, this.audit, this.accounts, actor);
  }

  private users() {
    return this.storage.db
      .selectFrom('users')
      .leftJoin('accounts', 'accounts.id', 'users.account_id')
      .selectAll('users')
      .select('accounts.username as account_name');
  }

  async findByName(name: string): Promise<User | undefined> {
    const row = await this.users().where('users.name', '=', name).executeTakeFirst();
    return row ? toUser(row) : undefined;
  }

  async findById(id: number): Promise<User | undefined> {
    const row = await this.users().where('users.id', '=', id).executeTakeFirst();
    return row ? toUser(row) : undefined;
  }

  /** Operators (account null) or the users of one account. */
  async list(accountId: number | null): Promise<User[]> {
    const rows = await this.users()
      .where('users.account_id', accountId === null ? 'is' : '=', accountId)
      .orderBy('users.name')
      .execute();
    return rows.map(toUser);
  }

  /**
   * An operator. With `invite` false it gets a one-time password it must change at first login;
   * otherwise an invite token (the link's secret) with which it sets its own password.
   */
  async createOperator(name: string, role: OperatorRole, invite: boolean): Promise<{ user: User; password?: string; inviteToken?: string }> {
    return this.createUser(name, role, null, invite);
  }

  /** A customer's user of `accountUsername`; it sets its password from the invite link. */
  async createCustomer(accountUsername: string, name: string, role: CustomerRole): Promise<{ user: User; inviteToken: string }> {
    const account = await this.accounts.show(accountUsername);
    const { user, inviteToken } = await this.createUser(name, role, account.id, true);
    return { user, inviteToken: inviteToken ?? '' };
  }

  private async createUser(name: string, role: Role, accountId: number | null, invite: boolean): Promise<{ user: User; password?: string; inviteToken?: string }> {
    if (!USER_NAME_PATTERN.test(name)) throw new UserError('INVALID', 'a user name must be 1 to 64 letters, digits or . _ @ -');
    if (await this.findByName(name)) throw new UserError('ALREADY_EXISTS', `user ${name} already exists`);
    const now = this.clock.now();
    const password = invite ? undefined : oneTimePassword();
    const inviteToken = invite ? secret() : undefined;
    const passwordHash = password === undefined ? null : await hashPassword(password);
    const id = await this.storage.transaction(async (tx) => {
      const row = await tx.db
        .insertInto('users')
        .values({ name, role, account_id: accountId, password_hash: passwordHash, must_change_password: password === undefined ? 0 : 1, disabled: 0, created_at: now.toISOString() })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (inviteToken !== undefined) {
        await tx.db
          .insertInto('invites')
          .values({ token_hash: sha256(inviteToken), user_id: row.id, created_at: now.toISOString(), expires_at: new Date(now.getTime() + INVITE_TTL_MS).toISOString(), used_at: null })
          .execute();
      }
      await this.audit.record(tx, this.actor, { action: 'user.create', targetKind: 'user', target: name, after: { role, accountId, invite } });
      return row.id;
    });
    const user = (await this.findById(id)) as User;
    return { user, ...(password === undefined ? {} : { password }), ...(inviteToken === undefined ? {} : { inviteToken }) };
  }

  /**
   * Self-service sign-up (issue 16, when the operator turned it on): in one transaction, the
   * account (AccountService.openForSignUp: trial credits as a ledger row, no key yet, the key
   * required everywhere), its owner with the chosen password, and the audit rows, recorded as
   * made by the new customer from `address`. The account and its user share the name, which must
   * be free as both. Refused with SignUpLimitError when `address` already signed up
   * `perAddressPerDay` times in the last 24 hours (counted from the audit log, so every instance
   * sharing the store counts alike).
   *
   * Every check runs before the password is hashed (scrypt's cost is spent only on a sign-up that
   * can succeed), and again inside the transaction under Storage.serialize, so sign-ups running
   * at once cannot both take the last place or the same name.
   */
  async signUp(request: SignUpRequest): Promise<{ user: User; account: Account }> {
    const { username, password, address } = request;
    if (!USER_NAME_PATTERN.test(username)) throw new UserError('INVALID', 'a user name must be 1 to 64 letters, digits or . _ @ -');
    checkPassword(password);
    await this.checkSignUp(this.storage.db, request);
    const passwordHash = await hashPassword(password);
    const actor: Actor = { kind: 'customer', name: username, address };
    const accounts = this.accounts.withActor(actor);
    const { id, account } = await this.storage.transaction(async (tx) => {
      await this.storage.serialize(tx, 'signup');
      await this.checkSignUp(tx.db, request);
      const opened = await accounts.openForSignUp(tx, username, request.trialCredits);
      const now = this.clock.now().toISOString();
      const row = await tx.db
        .insertInto('users')
        .values({ name: username, role: 'owner', account_id: opened.id, password_hash: passwordHash, must_change_password: 0, disabled: 0, created_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      await this.audit.record(tx, actor, { action: 'user.create', targetKind: 'user', target: username, after: { role: 'owner', accountId: opened.id, invite: false, signUp: true } });
      return { id: row.id, account: opened };
    });
    return { user: (await this.findById(id)) as User, account };
  }

  /** The name is free (as an account and as a user) and the address is under its bound. */
  private async checkSignUp(db: Db, request: SignUpRequest): Promise<void> {
    const now = this.clock.now().getTime();
    const since = new Date(now - SIGNUP_WINDOW_MS).toISOString();
    const recent = await this.audit.timesFrom(db, SIGNUP_AUDIT_ACTION, request.address, since, request.perAddressPerDay);
    const oldest = recent[0];
    if (recent.length >= request.perAddressPerDay && oldest !== undefined) {
      throw new SignUpLimitError(request.perAddressPerDay, Math.max(1, Math.ceil((Date.parse(oldest) + SIGNUP_WINDOW_MS - now) / 1000)));
    }
    const account = await db.selectFrom('accounts').select('id').where('username', '=', request.username).executeTakeFirst();
    const user = await db.selectFrom('users').select('id').where('name', '=', request.username).executeTakeFirst();
    if (account !== undefined || user !== undefined) throw new UserError('ALREADY_EXISTS', `the name ${request.username} is taken; choose another`);
  }

  /**
   * What an invite link is for, without using it (the console's accept page names the user and the
   * account before a password is chosen, issue 26 item 11): undefined for an unknown token; a used
   * or expired invite says so, with when.
   */
  async invitation(token: string): Promise<Invitation | undefined> {
    const invite = await this.storage.db.selectFrom('invites').selectAll().where('token_hash', '=', sha256(token)).executeTakeFirst();
    if (!invite) return undefined;
    const user = await this.findById(invite.user_id);
    if (!user) return undefined;
    const state = invite.used_at !== null ? 'used' : invite.expires_at <= this.clock.now().toISOString() ? 'expired' : 'open';
    return { user, state, expiresAt: invite.expires_at, usedAt: invite.used_at };
  }

  /** Sets the password of an invited user; the invite works once, within INVITE_TTL_MS. */
  async acceptInvite(token: string, password: string): Promise<User> {
    checkPassword(password);
    const now = this.clock.now().toISOString();
    const invite = await this.storage.db.selectFrom('invites').selectAll().where('token_hash', '=', sha256(token)).executeTakeFirst();
    if (!invite || invite.used_at !== null || invite.expires_at <= now) throw new UserError('NOT_FOUND', 'this invite link is unknown, used or expired');
    const passwordHash = await hashPassword(password);
    await this.storage.transaction(async (tx) => {
      const used = await tx.db.updateTable('invites').set({ used_at: now }).where('token_hash', '=', invite.token_hash).where('used_at', 'is', null).executeTakeFirst();
      if (Number(used.numUpdatedRows) !== 1) throw new UserError('NOT_FOUND', 'this invite link is unknown, used or expired');
      await tx.db.updateTable('users').set({ password_hash: passwordHash, must_change_password: 0 }).where('id', '=', invite.user_id).execute();
      const user = await tx.db.selectFrom('users').select('name').where('id', '=', invite.user_id).executeTakeFirstOrThrow();
      await this.audit.record(tx, { ...this.actor, name: user.name }, { action: 'user.accept-invite', targetKind: 'user', target: user.name });
    });
    return (await this.findById(invite.user_id)) as User;
  }

  /**
   * Checks a name and password; the same work is done for unknown names, so timing does not
   * tell which names exist. Undefined when the login is refused.
   */
  async verifyLogin(name: string, password: string): Promise<User | undefined> {
    if (password.length > MAX_PASSWORD_LENGTH) return undefined;
    const row = await this.storage.db.selectFrom('users').select(['id', 'password_hash', 'disabled']).where('name', '=', name).executeTakeFirst();
    const ok = await verifyPassword(password, row?.password_hash ?? DUMMY_PASSWORD_HASH);
    if (!ok || !row || row.password_hash === null || row.disabled !== 0) return undefined;
    return this.findById(row.id);
  }

  /** A new session: returns its id (the cookie's value) and its CSRF token. */
  async startSession(user: User, address: string | null): Promise<{ sessionId: string; csrfToken: string; expiresAt: string }> {
    const sessionId = secret();
    const csrfToken = secret();
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS).toISOString();
    await this.storage.transaction(async (tx) => {
      // Expired sessions of this user go as a new one starts: the table stays small without a sweeper.
      await tx.db.deleteFrom('sessions').where('user_id', '=', user.id).where('expires_at', '<=', now.toISOString()).execute();
      await tx.db.insertInto('sessions').values({ id_hash: sha256(sessionId), user_id: user.id, csrf_token: csrfToken, created_at: now.toISOString(), expires_at: expiresAt, address }).execute();
    });
    return { sessionId, csrfToken, expiresAt };
  }

  /** The user and CSRF token of a live session, read from the store on every request. */
  async session(sessionId: string): Promise<{ user: User; csrfToken: string } | undefined> {
    const row = await this.storage.db.selectFrom('sessions').select(['user_id', 'csrf_token', 'expires_at']).where('id_hash', '=', sha256(sessionId)).executeTakeFirst();
    if (!row || row.expires_at <= this.clock.now().toISOString()) return undefined;
    const user = await this.findById(row.user_id);
    if (!user || user.disabled) return undefined;
    return { user, csrfToken: row.csrf_token };
  }

  async endSession(sessionId: string): Promise<void> {
    await this.storage.db.deleteFrom('sessions').where('id_hash', '=', sha256(sessionId)).execute();
  }

  /** "Log out everywhere": every session of the user ends at once, on every instance. */
  async endAllSessions(user: User): Promise<number> {
    const result = await this.storage.transaction(async (tx) => {
      const deleted = await tx.db.deleteFrom('sessions').where('user_id', '=', user.id).executeTakeFirst();
      await this.audit.record(tx, this.actor, { action: 'user.logout-everywhere', targetKind: 'user', target: user.name });
      return deleted;
    });
    return Number(result.numDeletedRows);
  }

  /** Changes the user's own password; its other sessions end (the current one is kept). */
  async changePassword(user: User, current: string, next: string, keepSessionId: string | undefined): Promise<void> {
    checkPassword(next);
    if (!(await this.verifyLogin(user.name, current))) throw new UserError('FORBIDDEN', 'the current password is wrong');
    const passwordHash = await hashPassword(next);
    await this.storage.transaction(async (tx) => {
      await tx.db.updateTable('users').set({ password_hash: passwordHash, must_change_password: 0 }).where('id', '=', user.id).execute();
      let others = tx.db.deleteFrom('sessions').where('user_id', '=', user.id);
      if (keepSessionId !== undefined) others = others.where('id_hash', '<>', sha256(keepSessionId));
      await others.execute();
      await this.audit.record(tx, this.actor, { action: 'user.change-password', targetKind: 'user', target: user.name });
    });
  }

  /** An operator API token; the secret is returned this once. */
  async createToken(owner: User, name: string, scope: 'read' | 'write'): Promise<{ token: OperatorToken; secret: string }> {
    if (!/^[\p{L}\p{N} ._@:-]{1,64}$/u.test(name)) throw new UserError('INVALID', 'a token name must be 1 to 64 letters, digits, spaces or . _ @ : -');
    const value = `vlop_${secret()}`;
    const now = this.clock.now().toISOString();
    const id = await this.storage.transaction(async (tx) => {
      // Token creates run one at a time on every instance, so two cannot both find the name free (issue 28).
      await this.storage.serialize(tx, 'operator-tokens');
      const taken = await tx.db.selectFrom('operator_tokens').select('id').where('name', '=', name).where('revoked_at', 'is', null).executeTakeFirst();
      if (taken) throw new UserError('ALREADY_EXISTS', `a live operator token is already named ${name}`);
      const row = await tx.db
        .insertInto('operator_tokens')
        .values({ user_id: owner.id, name, prefix: value.slice(0, 12), token_hash: sha256(value), scope, created_at: now, revoked_at: null })
        .returning('id')
        .executeTakeFirstOrThrow();
      await this.audit.record(tx, this.actor, { action: 'token.create', targetKind: 'operator-token', target: String(row.id), after: { name, scope, owner: owner.name } });
      return row.id;
    });
    return { token: (await this.tokens()).find((t) => t.id === id) as OperatorToken, secret: value };
  }

  async tokens(): Promise<OperatorToken[]> {
    const rows = await this.storage.db
      .selectFrom('operator_tokens')
      .innerJoin('users', 'users.id', 'operator_tokens.user_id')
      .select(['operator_tokens.id', 'operator_tokens.name', 'operator_tokens.prefix', 'operator_tokens.scope', 'operator_tokens.created_at', 'operator_tokens.revoked_at', 'users.name as owner'])
      .orderBy('operator_tokens.id')
      .execute();
    return rows.map((r) => ({ id: r.id, name: r.name, prefix: r.prefix, scope: r.scope, createdBy: r.owner, createdAt: r.created_at, revokedAt: r.revoked_at }));
  }

  async revokeToken(id: number): Promise<OperatorToken> {
    const token = (await this.tokens()).find((t) => t.id === id);
    if (!token) throw new UserError('NOT_FOUND', `no operator token ${id}`);
    await this.storage.transaction(async (tx) => {
      await tx.db.updateTable('operator_tokens').set({ revoked_at: this.clock.now().toISOString() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
      await this.audit.record(tx, this.actor, { action: 'token.revoke', targetKind: 'operator-token', target: String(id), before: { name: token.name, scope: token.scope } });
    });
    return (await this.tokens()).find((t) => t.id === id) as OperatorToken;
  }

  /** The token and its owner when `value` is a live operator token (read from the store each time). */
  async authenticateToken(value: string): Promise<{ token: OperatorToken; user: User } | undefined> {
    const row = await this.storage.db.selectFrom('operator_tokens').select(['id', 'user_id', 'revoked_at']).where('token_hash', '=', sha256(value)).executeTakeFirst();
    if (!row || row.revoked_at !== null) return undefined;
    const user = await this.findById(row.user_id);
    if (!user || user.disabled || user.accountId !== null) return undefined;
    const token = (await this.tokens()).find((t) => t.id === row.id) as OperatorToken;
    return { token, user };
  }
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw new UserError('INVALID', `a password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
  }
}
