import { html, type Html } from './html.js';

/** One field of an audit row that differs between its before and after. */
export interface FieldChange {
  /** The field's name; a nested object's fields are dotted (`rateLimits.perSecond`). */
  readonly field: string;
  /** `added`/`removed`: the field is on one side only. */
  readonly kind: 'changed' | 'added' | 'removed';
  readonly before?: unknown;
  readonly after?: unknown;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Nested objects flattened to dotted names; arrays and other values stay whole. */
function flatten(value: Record<string, unknown>, prefix = '', into = new Map<string, unknown>()): Map<string, unknown> {
  for (const [key, item] of Object.entries(value)) {
    const name = prefix === '' ? key : `${prefix}.${key}`;
    if (isPlainObject(item) && Object.keys(item).length > 0) flatten(item, name, into);
    else into.set(name, item);
  }
  return into;
}

/**
 * The fields an audit row's before and after differ in, in the order the after (then the before)
 * lists them: what a person reads instead of two JSON documents (issue 26 item 16). A create has
 * no before, so each field of its after is added; a delete the other way round.
 */
export function auditChanges(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): FieldChange[] {
  const old = flatten(before ?? {});
  const now = flatten(after ?? {});
  const changes: FieldChange[] = [];
  for (const [field, value] of now) {
    if (!old.has(field)) changes.push({ field, kind: 'added', after: value });
    else if (JSON.stringify(old.get(field)) !== JSON.stringify(value)) changes.push({ field, kind: 'changed', before: old.get(field), after: value });
  }
  for (const [field, value] of old) if (!now.has(field)) changes.push({ field, kind: 'removed', before: value });
  return changes;
}

/** A value as a person reads it: text as it is (quoted only when empty), anything else as JSON. */
function shown(value: unknown): string {
  if (typeof value === 'string') return value === '' ? '""' : value;
  return JSON.stringify(value);
}

/**
 * The change of an audit row as a short list (`field: old → new`, added and removed fields marked
 * where both sides exist), escaped like every console value, with the raw JSON one click away.
 */
export function auditDiff(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): Html | string {
  if (before === undefined && after === undefined) return '';
  const changes = auditChanges(before, after);
  // Marks only where the row has both sides: on a create every field is new, on a delete every one goes.
  const marked = before !== undefined && after !== undefined;
  const items = changes.map((c) => {
    if (c.kind === 'changed') return html`<li><code>${c.field}</code>: ${shown(c.before)} → ${shown(c.after)}</li>`;
    const value = c.kind === 'added' ? c.after : c.before;
    return html`<li${marked ? html` class="${c.kind}"` : ''}><code>${c.field}</code>: ${shown(value)}${marked ? html` <span class="muted">(${c.kind})</span>` : ''}</li>`;
  });
  const raw = html`<details><summary>JSON</summary>${before === undefined ? '' : html`<p>Before: <code>${JSON.stringify(before)}</code></p>`}${after === undefined ? '' : html`<p>After: <code>${JSON.stringify(after)}</code></p>`}</details>`;
  return html`${changes.length === 0 ? html`<p class="muted">No field changed.</p>` : html`<ul class="diff">${items}</ul>`}${raw}`;
}
