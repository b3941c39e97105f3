import type { OperatorToken } from '../../users/user.service.js';
import { html } from './html.js';
import { csrfField, message, page, when, type Viewer } from './layout.js';
import { atMost, fieldMessage, formMessage, hint, invalidAttrs, typed, type FormError } from './form-errors.js';

export const TOKENS_PATH = '/console/admin/tokens';

/** Operator API tokens: never their secrets, only the prefix that tells them apart. */
export function tokensPage(viewer: Viewer, input: { tokens: readonly OperatorToken[]; notice?: string | undefined; error?: FormError | undefined }): string {
  const { error } = input;
  const scopeOption = (value: string) => html`<option value="${value}"${typed(error, 'token', 'scope') === value ? ' selected' : ''}>${value}</option>`;
  return page(
    'Operator API tokens',
    html`${input.notice ? message('notice', input.notice) : ''}
<p>Machine access to the admin API (<code>/admin/api</code>) with <code>Authorization: Bearer</code>. A <strong>read</strong> token reads everything, a <strong>write</strong> token changes too. Tokens are stored only as a hash; a revoked token is refused at once on every instance.</p>
<div class="table-wrap" role="region" aria-label="API tokens table" tabindex="0"><table data-testid="tokens">
<thead><tr><th scope="col">Name</th><th scope="col">Starts with</th><th scope="col">Scope</th><th scope="col">Created by</th><th scope="col">Created</th><th scope="col">State</th>${viewer.canWrite ? html`<th scope="col">Actions</th>` : ''}</tr></thead>
<tbody>${
      input.tokens.length === 0
        ? html`<tr><td colspan="${viewer.canWrite ? 7 : 6}" class="muted">No tokens.</td></tr>`
        : input.tokens.map(
            (t) => html`<tr><td>${t.name}</td><td><code>${t.prefix}</code></td><td>${t.scope}</td><td>${t.createdBy}</td><td>${when(t.createdAt)}</td><td>${t.revokedAt === null ? html`<span class="status-active">live</span>` : html`<span class="status-disabled">revoked</span> ${when(t.revokedAt)}`}</td>${
              viewer.canWrite
                ? html`<td>${t.revokedAt === null ? html`<form class="inline" method="post" action="${TOKENS_PATH}/${t.id}/revoke" data-confirm="Revoke this token? Clients using it are refused at once.">${csrfField(viewer)}<button type="submit" class="danger" aria-label="Revoke token ${t.name}">Revoke</button></form>` : ''}</td>`
                : ''
            }</tr>`,
          )
    }</tbody></table></div>
${
  viewer.canWrite
    ? html`<section class="panel" aria-labelledby="create"><h2 id="create">Create a token</h2>
<form method="post" action="${TOKENS_PATH}" class="row">${csrfField(viewer)}${formMessage(error, 'token', ['name'])}
  <div><label for="tk-name">Name (what uses it)</label><input type="text" id="tk-name" name="name" required placeholder="e.g. billing sync" value="${typed(error, 'token', 'name')}"${invalidAttrs(error, 'token', 'name', 'tk-name', true)}>${hint('tk-name', atMost(64))}${fieldMessage(error, 'token', 'name', 'tk-name')}</div>
  <div><label for="tk-scope">Scope</label><select id="tk-scope" name="scope">${scopeOption('read')}${scopeOption('write')}</select></div>
  <div><button type="submit">Create token</button></div>
</form></section>`
    : html`<p class="muted">Your role (${viewer.user.role}) reads only; an admin creates and revokes tokens.</p>`
}`,
    viewer,
  );
}

/** The one time a token's secret is shown, with a copy button and a ready curl example. */
export function tokenCreatedPage(viewer: Viewer, input: { token: OperatorToken; secret: string; baseUrl: string }): string {
  const curl = `curl -H 'Authorization: Bearer ${input.secret}' ${input.baseUrl}/admin/api/accounts`;
  return page(
    `Token ${input.token.name} created`,
    html`<p>The ${input.token.scope} token <strong>${input.token.name}</strong> works now. Copy it: <strong>it is shown only this once</strong> and stored only as a hash.</p>
<p class="secret" id="secret" data-testid="secret">${input.secret}</p>
<p><button type="button" data-copy="secret" hidden>Copy token</button></p>
<h2>Try it</h2>
<pre id="curl" data-testid="curl">${curl}</pre>
<p><button type="button" data-copy="curl" hidden>Copy command</button></p>
<p><a href="${TOKENS_PATH}">Back to the tokens</a></p>`,
    viewer,
  );
}
