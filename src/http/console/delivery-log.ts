import type { WebhookDelivery, WebhookMessage } from '../../webhooks/webhook.repository.js';
import { RESPONSE_EXCERPT_BYTES } from '../../webhooks/webhook-dispatcher.js';
import { html, type Html } from './html.js';
import { csrfField, when, type Viewer } from './layout.js';

/** How often console.js fetches the log again while a message is pending. */
export const DELIVERY_LOG_POLL_MS = 2000;

/** The log's path for a message's resend form, below the endpoint's page. */
export const resendPath = (endpointHref: string, messageId: string): string => `${endpointHref}/messages/${encodeURIComponent(messageId)}/resend`;

/** The payload as JSON indented for reading; as stored when it is not JSON (it always is). */
function pretty(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}

/** The receiver's answer: its first bytes as text, or why there are none. */
function answer(d: WebhookDelivery): Html {
  if (d.responseBody === null) return html`<span class="muted">no answer</span>`;
  if (d.responseBody === '') return html`<span class="muted">empty body</span>`;
  const cut = Buffer.byteLength(d.responseBody) >= RESPONSE_EXCERPT_BYTES - 3;
  return html`<pre class="answer">${d.responseBody}</pre>${cut ? html`<span class="muted">(the first ${RESPONSE_EXCERPT_BYTES} bytes)</span>` : ''}`;
}

function result(d: WebhookDelivery): Html {
  return d.succeeded ? html`<span class="status-active">delivered</span>` : html`<span class="status-disabled">failed</span>${d.error ? html`: ${d.error}` : ''}`;
}

function attemptsTable(attempts: readonly WebhookDelivery[]): Html {
  if (attempts.length === 0) return html`<p class="muted" data-testid="attempts">No attempt yet.</p>`;
  return html`<div class="table-wrap" role="region" aria-label="Delivery attempts of ${attempts[0]?.messageId ?? ''} table" tabindex="0"><table data-testid="attempts">
<thead><tr><th scope="col">Started</th><th scope="col" class="num">Attempt</th><th scope="col" class="num">Status code</th><th scope="col" class="num">Time (ms)</th><th scope="col">Result</th><th scope="col">The receiver's answer</th></tr></thead>
<tbody>${attempts.map(
    (d) => html`<tr><td>${when(d.startedAt)}</td><td class="num">${d.attempt}</td><td class="num">${d.statusCode ?? '–'}</td><td class="num">${d.durationMs}</td><td>${result(d)}</td><td>${answer(d)}</td></tr>`,
  )}</tbody></table></div>`;
}

function messageStatus(m: WebhookMessage): Html {
  if (m.status === 'delivered') return html`<span class="status-active">delivered</span>`;
  if (m.status === 'failed') return html`<span class="status-disabled">failed</span>`;
  return html`<span>pending</span>`;
}

function messageBlock(viewer: Viewer, endpointHref: string, m: WebhookMessage, attempts: readonly WebhookDelivery[]): Html {
  const id = `m-${m.id}`;
  return html`<article class="panel" data-testid="message" data-message-id="${m.id}" aria-labelledby="${id}">
<h3 id="${id}"><code>${m.eventType}</code> <code>${m.id}</code>: ${messageStatus(m)}</h3>
<p class="muted">Queued ${when(m.createdAt)}; ${m.attempts} ${m.attempts === 1 ? 'attempt' : 'attempts'}${m.status === 'pending' ? html`; next attempt ${when(m.nextAttemptAt)}` : ''}.</p>
${
  viewer.canWrite
    ? html`<form method="post" action="${resendPath(endpointHref, m.id)}" class="row">${csrfField(viewer)}<div><button type="submit" class="secondary" aria-label="Resend ${m.eventType} message ${m.id}">Resend</button></div></form>`
    : ''
}
<details data-keep="${m.id}"><summary>Request payload</summary><pre class="payload" data-testid="payload">${pretty(m.payload)}</pre></details>
${attemptsTable(attempts)}
</article>`;
}

/**
 * An endpoint's delivery log (issue 26 item 15), as Stripe and Svix show one: each message with
 * the payload it carries, a Resend button for writers, and each attempt's status and the first
 * bytes of the receiver's answer. While a message is pending the section says so
 * (`data-pending`), and console.js fetches the page again and swaps the section in until nothing
 * is pending; without JavaScript the hint says to reload.
 */
export function deliveryLog(viewer: Viewer, endpointHref: string, messages: readonly WebhookMessage[], deliveries: readonly WebhookDelivery[]): Html {
  const byMessage = new Map<string, WebhookDelivery[]>();
  for (const d of deliveries) byMessage.set(d.messageId, [...(byMessage.get(d.messageId) ?? []), d]);
  const waiting = messages.filter((m) => m.status === 'pending').map((m) => m.nextAttemptAt);
  const pending = waiting.length > 0;
  // The earliest next attempt: a retry due in an hour is not asked about every 2 s meanwhile (console.js).
  const nextAttempt = pending ? html` data-next-attempt="${waiting.sort()[0] ?? ''}"` : '';
  return html`<section aria-labelledby="log" data-delivery-log data-pending="${pending ? 'true' : 'false'}" data-poll-ms="${DELIVERY_LOG_POLL_MS}"${nextAttempt}>
<h2 id="log">Delivery log</h2>
<p class="muted">Newest first. A failed attempt is retried on the server's schedule; the message says when.${
    pending ? html` <strong data-testid="pending-note">A message is waiting to be sent: this log follows it by itself (without JavaScript, reload the page).</strong>` : ''
  }</p>
<div data-testid="messages">${messages.length === 0 ? html`<p class="muted">No messages yet.</p>` : messages.map((m) => messageBlock(viewer, endpointHref, m, byMessage.get(m.id) ?? []))}</div>
</section>`;
}
