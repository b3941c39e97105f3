import type { User } from '../../users/user.service.js';
import { ASSETS } from './console-assets.js';
import { html, type Html, type HtmlValue } from './html.js';

/** Where a page's navigation and logout form come from: the logged-in user and the session's CSRF token. */
export interface Viewer {
  readonly user: User;
  readonly csrf: string;
  readonly canWrite: boolean;
  /** The path of the page asked for, so the navigation marks where the user is (aria-current). */
  readonly here?: string | undefined;
}

/** The hidden field every console form carries (the session's CSRF token). */
export const CSRF_FIELD = '_csrf';

export const csrfField = (viewer: Viewer): Html => html`<input type="hidden" name="${CSRF_FIELD}" value="${viewer.csrf}">`;

function navigation(viewer: Viewer): Html {
  const links: Array<[string, string]> =
    viewer.user.accountId === null
      ? [
          ['/console/admin', 'Overview'],
          ['/console/admin/accounts', 'Accounts'],
          ['/console/admin/imports', 'Imports'],
          ['/console/admin/providers', 'Providers'],
          ['/console/admin/test-plates', 'Test plates'],
          ['/console/admin/webhooks', 'Webhooks'],
          ['/console/admin/tokens', 'API tokens'],
          ['/console/admin/audit', 'Audit log'],
        ]
      : [
          ['/console/account', 'My account'],
          ['/console/account/alerts', 'Alerts and webhooks'],
          ['/console/account/try', 'Try it'],
        ];
  // The current section is the link with the longest path the page's path starts with.
  const here = viewer.here ?? '';
  const current = links.map(([href]) => href).filter((href) => here === href || here.startsWith(`${href}/`)).sort((a, b) => b.length - a.length)[0];
  return html`<nav aria-label="Console"><ul>${links.map(([href, label]) => html`<li><a href="${href}"${href === current ? html` aria-current="page"` : ''}>${label}</a></li>`)}</ul></nav>
  <form method="post" action="/console/logout">${csrfField(viewer)}<span class="muted-on-dark">${viewer.user.name} (${viewer.user.role}${viewer.user.account === null ? '' : html`, ${viewer.user.account}`})</span> <button type="submit" class="secondary">Log out</button><button type="submit" class="secondary" formaction="/console/logout-everywhere">Log out everywhere</button></form>`;
}

/** The page shell: one stylesheet, one deferred script, a skip link, the console navigation when logged in. */
export function page(title: string, body: HtmlValue, viewer?: Viewer): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · vehicle-lookup</title>
<link rel="icon" type="image/svg+xml" href="${ASSETS.icon.path}">
<link rel="stylesheet" href="${ASSETS.css.path}">
<script src="${ASSETS.js.path}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/">vehicle-lookup</a>${viewer ? navigation(viewer) : html`<nav aria-label="Site"><ul><li><a href="/console/login">Console login</a></li></ul></nav>`}</header>
<main id="main">
<h1>${title}</h1>
${viewer?.user.role === 'viewer' ? html`<p class="notice" role="note" data-testid="read-only">Your role (viewer) reads only: these pages show what there is, and an admin makes the changes.</p>` : ''}
${body}
</main>
</body>
</html>
`.text;
}

/** A message box: notices (role status) and errors (role alert, read out at once). */
export function message(kind: 'notice' | 'error', text: HtmlValue): Html {
  return kind === 'error' ? html`<div class="error" role="alert">${text}</div>` : html`<div class="notice" role="status">${text}</div>`;
}

/** A timestamp as the store keeps it (ISO, UTC), shortened for tables. */
export function when(iso: string | null | undefined): Html {
  if (iso === null || iso === undefined) return html`<span class="muted">never</span>`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}
