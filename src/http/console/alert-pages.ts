import type { AlertThresholds } from '../../alerts/credit-alerts.js';
import { MAX_THRESHOLDS } from '../../alerts/credit-alerts.js';
import type { WebhookDelivery, WebhookEndpoint, WebhookMessage } from '../../webhooks/webhook.repository.js';
import { eventTypesFor, MAX_ENDPOINTS } from '../../webhooks/webhook.service.js';
import { html, type Html } from './html.js';
import { csrfField, message, page, when, type Viewer } from './layout.js';
import { DESCRIPTION } from '../api/api-schemas.js';
import { deliveryLog } from './delivery-log.js';
import { atMost, fieldMessage, formMessage, hint, invalidAttrs, type FormError } from './form-errors.js';

/** The limits the register and thresholds forms state beside their fields (the routes' schemas). */
export const WEBHOOK_URL_MAX = 2048;
export const WEBHOOK_DESCRIPTION_MAX = (DESCRIPTION as { maxLength: number }).maxLength;
export const THRESHOLDS_TEXT_MAX = 200;

/** Where one scope's alert pages live: its overview page and its endpoints' prefix. */
export interface AlertPaths {
  /** The thresholds and endpoints page, e.g. `/console/account/alerts`. */
  readonly page: string;
  /** Endpoints are `${endpoints}/${id}`; registering posts to `endpoints`. */
  readonly endpoints: string;
}

/** Whose alerts a page shows, in words, and where "back" leads. */
export interface AlertScopeView {
  readonly title: string;
  readonly paths: AlertPaths;
  /** Who is told: "this account's own endpoints", "every account"... */
  readonly intro: Html;
  readonly back?: { readonly href: string; readonly label: string } | undefined;
}

/** The form fields of the event checkboxes: one field per event type (forms post one value per name). */
export const eventField = (type: string): string => `event_${type}`;

/** What was typed into the register or thresholds form, shown again with its error. */
export interface AlertsTyped {
  readonly url?: string | undefined;
  readonly description?: string | undefined;
  readonly events?: readonly string[] | undefined;
  readonly thresholds?: string | undefined;
}

export interface AlertsInput extends AlertScopeView {
  /** Undefined for the operator's own endpoints (thresholds belong to an account). */
  readonly thresholds?: AlertThresholds | undefined;
  readonly endpoints: readonly WebhookEndpoint[];
  readonly notice?: string | undefined;
  /** The register or thresholds form that came back, with its field at fault (form-errors.ts). */
  readonly error?: FormError | undefined;
  readonly typed?: AlertsTyped | undefined;
}

const list = (values: readonly number[]): string => (values.length === 0 ? 'none' : values.join(', '));

function thresholdsSection(viewer: Viewer, input: AlertsInput, t: AlertThresholds): Html {
  const { error } = input;
  return html`<section aria-labelledby="thresholds"><h2 id="thresholds">Low-credit thresholds</h2>
<p>An alert is sent once when a charged lookup takes the balance to a threshold or below, and again only after a top-up takes it back above.</p>
<ul data-testid="thresholds"><li>Thresholds: <strong>${list(t.thresholds)}</strong> ${t.custom ? html`(this account's own)` : html`<span class="muted">(the server default)</span>`}</li>
<li>Fired and not re-armed yet: <strong>${list(t.fired)}</strong></li></ul>
${
  viewer.canWrite
    ? html`<form method="post" action="${input.paths.page}/thresholds" class="row">${csrfField(viewer)}${formMessage(error, 'thresholds', ['thresholds'])}
  <div><label for="t-values">Thresholds (credits, comma-separated)</label><input type="text" id="t-values" name="thresholds" value="${input.typed?.thresholds ?? (t.custom ? t.thresholds.join(', ') : '')}" placeholder="${t.thresholds.join(', ')}"${invalidAttrs(error, 'thresholds', 'thresholds', 't-values', true)}>
  ${hint('t-values', `At most ${MAX_THRESHOLDS} thresholds, ${atMost(THRESHOLDS_TEXT_MAX)}; empty: no alerts for this account.`)}${fieldMessage(error, 'thresholds', 'thresholds', 't-values')}</div>
  <div><button type="submit">Save thresholds</button></div>
</form>
${t.custom ? html`<form method="post" action="${input.paths.page}/thresholds/reset" class="row">${csrfField(viewer)}<div><button type="submit" class="secondary">Use the server default</button></div></form>` : ''}`
    : ''
}</section>`;
}

function endpointState(e: WebhookEndpoint): Html {
  return e.enabled ? html`<span class="status-active">enabled</span>` : html`<span class="status-disabled">disabled</span>`;
}

function endpointsTable(input: AlertsInput): Html {
  return html`<div class="table-wrap" role="region" aria-label="Webhook endpoints table" tabindex="0"><table data-testid="endpoints">
<thead><tr><th scope="col">URL</th><th scope="col">Description</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Created</th></tr></thead>
<tbody>${
    input.endpoints.length === 0
      ? html`<tr><td colspan="5" class="muted">No endpoints.</td></tr>`
      : input.endpoints.map(
          (e) => html`<tr><td class="url"><a href="${input.paths.endpoints}/${e.id}"><code>${e.url}</code></a></td><td>${e.description}</td><td>${e.events.join(', ')}</td><td>${endpointState(e)}</td><td>${when(e.createdAt)}</td></tr>`,
        )
  }</tbody></table></div>`;
}

function registerForm(viewer: Viewer, input: AlertsInput): Html {
  const typed = input.typed ?? {};
  const { error } = input;
  const checked = (type: string) => (typed.events === undefined || typed.events.includes(type) ? html` checked` : '');
  return html`<section class="panel" aria-labelledby="register"><h2 id="register">Register an endpoint</h2>
<form method="post" action="${input.paths.endpoints}">${csrfField(viewer)}${formMessage(error, 'register', ['url', 'description'])}
  <label for="w-url">URL (http or https) that receives a signed POST</label><input type="text" id="w-url" name="url" required inputmode="url" placeholder="https://example.com/hooks/vehicle-lookup" value="${typed.url ?? ''}"${invalidAttrs(error, 'register', 'url', 'w-url', true)}>
  ${hint('w-url', atMost(WEBHOOK_URL_MAX))}${fieldMessage(error, 'register', 'url', 'w-url')}
  <label for="w-description">Description (optional)</label><input type="text" id="w-description" name="description" value="${typed.description ?? ''}"${invalidAttrs(error, 'register', 'description', 'w-description', true)}>
  ${hint('w-description', atMost(WEBHOOK_DESCRIPTION_MAX))}${fieldMessage(error, 'register', 'description', 'w-description')}
  <fieldset><legend>Events</legend>${eventTypesFor(input.thresholds === undefined ? null : 0).map((type, i) => html`<div class="check"><input type="checkbox" id="w-event-${i}" name="${eventField(type)}" value="true"${checked(type)}><label for="w-event-${i}"><code>${type}</code></label></div>`)}</fieldset>
  <p><button type="submit">Register endpoint</button></p>
</form></section>`;
}

/** Thresholds (for an account) and the endpoints of one scope, with the register form for writers. */
export function alertsPage(viewer: Viewer, input: AlertsInput): string {
  return page(
    input.title,
    html`${input.notice ? message('notice', input.notice) : ''}
${input.thresholds ? thresholdsSection(viewer, input, input.thresholds) : ''}
<section aria-labelledby="endpoints"><h2 id="endpoints">Webhook endpoints</h2>
<p>${input.intro} Each delivery is signed as <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> says; open an endpoint for its delivery log, a test event and its secret.</p>
${endpointsTable(input)}
<p class="muted">At most ${MAX_ENDPOINTS} endpoints.</p></section>
${viewer.canWrite ? registerForm(viewer, input) : html`<p class="muted">Your role (${viewer.user.role}) reads only.</p>`}
${input.back ? html`<p><a href="${input.back.href}">${input.back.label}</a></p>` : ''}`,
    viewer,
  );
}

export interface EndpointInput extends AlertScopeView {
  readonly endpoint: WebhookEndpoint;
  readonly messages: readonly WebhookMessage[];
  readonly deliveries: readonly WebhookDelivery[];
  readonly notice?: string | undefined;
}

/** The rotation's grace periods offered: during it the old secret signs too. */
const GRACE_CHOICES: ReadonlyArray<readonly [number, string]> = [
  [0, 'none: the old secret stops at once'],
  [3600, '1 hour'],
  [24 * 3600, '24 hours'],
  [7 * 24 * 3600, '7 days'],
];

function endpointActions(viewer: Viewer, input: EndpointInput): Html {
  const e = input.endpoint;
  const base = `${input.paths.endpoints}/${e.id}`;
  return html`<section class="panel" aria-labelledby="actions"><h2 id="actions">Change it</h2>
<form method="post" action="${base}/test" class="row">${csrfField(viewer)}<div><button type="submit">Send a test event</button></div>
  <p class="muted">A <code>test</code> event goes to this endpoint only, through the outbox like any alert${e.enabled ? '' : ': while the endpoint is disabled, it is recorded as failed without a request'}.</p></form>
<form method="post" action="${base}/enabled" class="row">${csrfField(viewer)}<input type="hidden" name="enabled" value="${e.enabled ? 'false' : 'true'}">
  <div><button type="submit" class="secondary">${e.enabled ? 'Disable endpoint' : 'Enable endpoint'}</button></div></form>
<form method="post" action="${base}/rotate" class="row" data-confirm="Rotate the signing secret? The new one is shown once.">${csrfField(viewer)}
  <div><label for="r-grace">The old secret also signs for</label><select id="r-grace" name="graceSeconds">${GRACE_CHOICES.map(([seconds, label]) => html`<option value="${seconds}"${seconds === 24 * 3600 ? html` selected` : ''}>${label}</option>`)}</select></div>
  <div><button type="submit" class="secondary">Rotate secret</button></div></form>
<form method="post" action="${base}/delete" class="row" data-confirm="Delete this endpoint with its messages and delivery log?">${csrfField(viewer)}
  <div><button type="submit" class="danger">Delete endpoint</button></div></form>
</section>`;
}

/** One endpoint: its settings, and its delivery log (delivery-log.ts): each message's payload, attempts and answers. */
export function endpointPage(viewer: Viewer, input: EndpointInput): string {
  const e = input.endpoint;
  return page(
    `Webhook endpoint ${e.id}`,
    html`${input.notice ? message('notice', input.notice) : ''}
<ul data-testid="endpoint"><li>URL: <code>${e.url}</code></li>
<li>Description: ${e.description === '' ? html`<span class="muted">none</span>` : e.description}</li>
<li>Events: ${e.events.map((type, i) => html`${i > 0 ? ', ' : ''}<code>${type}</code>`)}</li>
<li>State: ${endpointState(e)}</li>
<li>Created ${when(e.createdAt)} by ${e.createdBy === 'operator' ? 'an operator' : 'the account'}; changed ${when(e.updatedAt)}</li>
${e.previousSecretUntil ? html`<li>The previous secret also signs until ${when(e.previousSecretUntil)}</li>` : ''}</ul>
${viewer.canWrite ? endpointActions(viewer, input) : ''}
${deliveryLog(viewer, `${input.paths.endpoints}/${e.id}`, input.messages, input.deliveries)}
<p><a href="${input.paths.page}">Back to ${input.title}</a></p>`,
    viewer,
  );
}

/** The one time an endpoint's signing secret is shown, with a copy button. */
export function webhookSecretPage(viewer: Viewer, input: { title: string; text: string; secret: string; endpointHref: string }): string {
  return page(
    input.title,
    html`<p>${input.text} Copy the signing secret now: <strong>it is shown only this once</strong>. Your receiver checks each delivery's <code>webhook-signature</code> with it.</p>
<p class="secret" id="secret" data-testid="secret">${input.secret}</p>
<p><button type="button" data-copy="secret" hidden>Copy secret</button></p>
<p><a href="${input.endpointHref}">Continue to the endpoint</a></p>`,
    viewer,
  );
}
