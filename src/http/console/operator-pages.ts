import type { Account } from '../../accounts/account.js';
import type { User } from '../../users/user.service.js';
import type { AuditFilter, AuditRow } from '../../audit/audit-log.js';
import { auditDiff } from './audit-diff.js';
import { figures, keysSection, ledgerSection, statusBadge, usageSection, type AccountPaths, type AccountView } from './account-sections.js';
import { html, type Html } from './html.js';
import { csrfField, message, page, when, type Viewer } from './layout.js';
import { atMost, fieldMessage, formMessage, hint, invalidAttrs, typed, type FormError } from './form-errors.js';

/** Accounts with balance, status and creation time (the accounts list, and those close to zero on the overview). */
export function accountsTable(accounts: readonly Account[]): Html {
  return html`<div class="table-wrap" role="region" aria-label="Accounts table" tabindex="0"><table data-testid="accounts">
  <thead><tr><th scope="col">Account</th><th scope="col" class="num">Balance</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
  <tbody>${accounts.length === 0 ? html`<tr><td colspan="4" class="muted">No accounts.</td></tr>` : accounts.map((a) => html`<tr><td><a href="/console/admin/accounts/${encodeURIComponent(a.username)}">${a.username}</a></td><td class="num">${a.credits}</td><td>${statusBadge(a)}</td><td>${when(a.createdAt)}</td></tr>`)}</tbody>
</table></div>`;
}

export function accountsPage(viewer: Viewer, input: { accounts: readonly Account[]; total: number; search: string; offset: number; limit: number; error?: FormError | undefined }): string {
  const { error } = input;
  const { offset, limit, search } = input;
  const link = (o: number) => `/console/admin/accounts?${new URLSearchParams({ ...(search ? { search } : {}), offset: String(o) }).toString()}`;
  return page(
    'Accounts',
    html`<form method="get" action="/console/admin/accounts" class="row" role="search">${formMessage(error, 'search', ['search'])}
  <div><label for="search">Search by name</label><input type="search" id="search" name="search" value="${typed(error, 'search', 'search', search)}"${invalidAttrs(error, 'search', 'search', 'search', true)}>${hint('search', atMost(64))}${fieldMessage(error, 'search', 'search', 'search')}</div>
  <div><button type="submit" class="secondary">Search</button></div>
</form>
<p class="muted">${input.total} account${input.total === 1 ? '' : 's'}${search ? html` matching “${search}”` : ''}.</p>
${accountsTable(input.accounts)}
<div class="pager">${offset > 0 ? html`<a href="${link(Math.max(0, offset - limit))}">Previous</a>` : ''}${offset + limit < input.total ? html`<a href="${link(offset + limit)}">Next</a>` : ''}</div>
${
  viewer.canWrite
    ? html`<section class="panel" aria-labelledby="create"><h2 id="create">Create an account</h2>
<form method="post" action="/console/admin/accounts" class="row">${csrfField(viewer)}${formMessage(error, 'create', ['username', 'credits'])}
  <div><label for="new-username">User name</label><input type="text" id="new-username" name="username" required value="${typed(error, 'create', 'username')}"${invalidAttrs(error, 'create', 'username', 'new-username')}><span class="hint">letters, digits and . _ @ -; at most 64 characters</span>${fieldMessage(error, 'create', 'username', 'new-username')}</div>
  <div><label for="new-credits">Starting credits</label><input type="number" id="new-credits" name="credits" min="0" value="${typed(error, 'create', 'credits', '0')}"${invalidAttrs(error, 'create', 'credits', 'new-credits')}>${fieldMessage(error, 'create', 'credits', 'new-credits')}</div>
  <div><button type="submit">Create account</button></div>
</form></section>`
    : ''
}`,
    viewer,
  );
}

export interface OperatorAccountInput extends AccountView {
  readonly users: readonly User[];
  readonly audit: readonly AuditRow[];
  readonly notice?: Html | string | undefined;
  /** A credits or key form that came back with an error, shown again with its values. */
  readonly error?: FormError | undefined;
}

export function accountPaths(username: string): AccountPaths {
  const name = encodeURIComponent(username);
  return { page: `/console/admin/accounts/${name}`, api: `/admin/api/accounts/${name}` };
}

function limitText(value: number | null): string {
  if (value === null) return 'server default';
  return value === 0 ? 'none' : String(value);
}

export function operatorAccountPage(viewer: Viewer, input: OperatorAccountInput): string {
  const { account } = input;
  const paths = accountPaths(account.username);
  const writable = viewer.canWrite && account.closedAt === null;
  const { error } = input;
  const opt = (value: string) => html`<option value="${value}"${typed(error, 'credits', 'operation') === value ? ' selected' : ''}>${value}</option>`;
  const roleOption = (value: string, label: string) => html`<option value="${value}"${typed(error, 'user', 'role') === value ? ' selected' : ''}>${label}</option>`;
  return page(
    `Account ${account.username}`,
    html`${input.notice ? message('notice', input.notice) : ''}
${figures(account, input.usage)}
${
  writable
    ? html`<section class="panel" aria-labelledby="credits"><h2 id="credits">Credits</h2>
<form method="post" action="${paths.page}/credits" class="row">${csrfField(viewer)}${formMessage(error, 'credits', ['amount', 'reference', 'note'])}
  <div><label for="c-operation">Change</label><select id="c-operation" name="operation">${opt('grant')}${opt('remove')}</select></div>
  <div><label for="c-amount">Amount (credits)</label><input type="number" id="c-amount" name="amount" min="1" required value="${typed(error, 'credits', 'amount')}"${invalidAttrs(error, 'credits', 'amount', 'c-amount')}>${fieldMessage(error, 'credits', 'amount', 'c-amount')}</div>
  <div><label for="c-reference">Reference (invoice, order)</label><input type="text" id="c-reference" name="reference" value="${typed(error, 'credits', 'reference')}"${invalidAttrs(error, 'credits', 'reference', 'c-reference', true)}>${hint('c-reference', atMost(100))}${fieldMessage(error, 'credits', 'reference', 'c-reference')}</div>
  <div><label for="c-note">Note</label><input type="text" id="c-note" name="note" value="${typed(error, 'credits', 'note')}"${invalidAttrs(error, 'credits', 'note', 'c-note', true)}>${hint('c-note', atMost(500))}${fieldMessage(error, 'credits', 'note', 'c-note')}</div>
  <div><button type="submit">Apply</button></div>
</form></section>`
    : ''
}
${usageSection(input)}
${ledgerSection(input, paths)}
${keysSection(input, paths, { ...viewer, canWrite: writable }, error)}
<section aria-labelledby="settings"><h2 id="settings">Limits and flags</h2>
<ul><li>API key required on the XML bindings: <strong>${account.requireApiKey ? 'yes' : 'no'}</strong></li>
<li>Rate limit per second: <strong>${limitText(account.rateLimits.perSecond)}</strong>; per day: <strong>${limitText(account.rateLimits.perDay)}</strong></li>
<li>Created ${when(account.createdAt)}${account.closedAt ? html`; closed ${when(account.closedAt)}` : ''}</li></ul>
${
  writable
    ? html`<form method="post" action="${paths.page}/settings" class="row">${csrfField(viewer)}
  <div><label for="s-require">API key on XML bindings</label><select id="s-require" name="requireApiKey"><option value="true"${account.requireApiKey ? ' selected' : ''}>required</option><option value="false"${account.requireApiKey ? '' : ' selected'}>not required</option></select></div>
  <div><label for="s-second">Per second (empty: default, 0: none)</label><input type="number" id="s-second" name="perSecond" min="0" value="${account.rateLimits.perSecond ?? ''}"></div>
  <div><label for="s-day">Per day (empty: default, 0: none)</label><input type="number" id="s-day" name="perDay" min="0" value="${account.rateLimits.perDay ?? ''}"></div>
  <div><button type="submit" class="secondary">Save</button></div>
</form>
<form method="post" action="${paths.page}/status" class="row" data-confirm="${account.disabled ? 'Enable this account?' : 'Disable this account? Its lookups are refused at once.'}">${csrfField(viewer)}
  <input type="hidden" name="disabled" value="${account.disabled ? 'false' : 'true'}">
  <div><button type="submit" class="${account.disabled ? 'secondary' : 'danger'}">${account.disabled ? 'Enable account' : 'Disable account'}</button></div>
</form>`
    : ''
}</section>
<section aria-labelledby="users"><h2 id="users">Users</h2>
<div class="table-wrap" role="region" aria-label="Users table" tabindex="0"><table data-testid="users"><thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Created</th></tr></thead>
<tbody>${input.users.length === 0 ? html`<tr><td colspan="4" class="muted">No users yet.</td></tr>` : input.users.map((u) => html`<tr><td>${u.name}</td><td>${u.role}</td><td>${u.disabled ? 'disabled' : u.active ? 'active' : 'invited'}</td><td>${when(u.createdAt)}</td></tr>`)}</tbody></table></div>
${
  writable
    ? html`<form method="post" action="${paths.page}/users" class="row">${csrfField(viewer)}${formMessage(error, 'user', ['name'])}
  <div><label for="u-name">Invite a user (name or e-mail)</label><input type="text" id="u-name" name="name" required value="${typed(error, 'user', 'name')}"${invalidAttrs(error, 'user', 'name', 'u-name', true)}>${hint('u-name', `letters, digits and . _ @ -; ${atMost(64)}`)}${fieldMessage(error, 'user', 'name', 'u-name')}</div>
  <div><label for="u-role">Role</label><select id="u-role" name="role">${roleOption('owner', 'owner (can change keys)')}${roleOption('member', 'member (reads)')}</select></div>
  <div><button type="submit">Create invitation</button></div>
</form>`
    : ''
}</section>
<section aria-labelledby="alerts"><h2 id="alerts">Alerts and webhooks</h2><p><a href="${paths.page}/alerts">Low-credit thresholds, webhook endpoints and their delivery log</a></p></section>
<section aria-labelledby="trail"><h2 id="trail">Audit trail of this account</h2>${auditTable(input.audit)}
<p><a href="/console/admin/audit?target=${encodeURIComponent(account.username)}">All of it</a></p></section>`,
    viewer,
  );
}

export function inviteCreatedPage(viewer: Viewer, input: { username: string; user: string; inviteUrl: string }): string {
  return page(
    'Invitation created',
    html`<p>Send this link to <strong>${input.user}</strong>. It works once, for 7 days, and is <strong>shown only this once</strong>.</p>
<p class="secret" id="invite-url" data-testid="invite-url">${input.inviteUrl}</p>
<p><button type="button" data-copy="invite-url" hidden>Copy link</button></p>
<p><a href="${accountPaths(input.username).page}">Back to ${input.username}</a></p>`,
    viewer,
  );
}

function auditTable(rows: readonly AuditRow[]): Html {
  return html`<div class="table-wrap" role="region" aria-label="Audit log table" tabindex="0"><table data-testid="audit"><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Change</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="5" class="muted">Nothing recorded.</td></tr>` : rows.map((r) => html`<tr><td>${when(r.at)}</td><td>${r.actor.kind} ${r.actor.name}${r.actor.address ? html` <span class="muted">from ${r.actor.address}</span>` : ''}</td><td>${r.action}</td><td>${r.targetKind} ${r.target}</td><td>${auditDiff(r.before, r.after)}</td></tr>`)}</tbody></table></div>`;
}

/** The audit log's filter fields and their limits (the route's schema). */
export const AUDIT_FILTER_MAX = { actor: 200, action: 64, target: 200 } as const;

export function auditPage(viewer: Viewer, input: { rows: readonly AuditRow[]; filter: Omit<AuditFilter, 'limit'>; next: number | null; error?: FormError | undefined }): string {
  const { filter, error } = input;
  const filterField = (name: keyof typeof AUDIT_FILTER_MAX, label: string, placeholder?: string) =>
    html`<div><label for="a-${name}">${label}</label><input type="text" id="a-${name}" name="${name}" value="${typed(error, 'audit', name, filter[name] ?? '')}"${placeholder === undefined ? '' : html` placeholder="${placeholder}"`}${invalidAttrs(error, 'audit', name, `a-${name}`, true)}>${hint(`a-${name}`, atMost(AUDIT_FILTER_MAX[name]))}${fieldMessage(error, 'audit', name, `a-${name}`)}</div>`;
  const params = (extra: Record<string, string>) => new URLSearchParams({ ...Object.fromEntries(Object.entries({ actor: filter.actor, action: filter.action, target: filter.target }).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')), ...extra }).toString();
  return page(
    'Audit log',
    html`<form method="get" action="/console/admin/audit" class="row" aria-label="Filter the audit log">${formMessage(error, 'audit', ['actor', 'action', 'target'])}
  ${filterField('actor', 'Who')}
  ${filterField('action', 'Action', 'e.g. credits.grant')}
  ${filterField('target', 'Target')}
  <div><button type="submit" class="secondary">Filter</button></div>
</form>
${auditTable(input.rows)}
<div class="pager">${input.next === null ? '' : html`<a href="/console/admin/audit?${params({ before: String(input.next) })}">Older entries</a>`}</div>`,
    viewer,
  );
}

export function accountCreatedPage(viewer: Viewer, body: Html): string {
  return page('Account created', body, viewer);
}
