import { Catalogue, splitKey } from '../../catalogue/catalogue.js';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import { html, type Html } from './html.js';
import { csrfField, message, page, type Viewer } from './layout.js';
import { atMost, fieldMessage, formMessage, hint, invalidAttrs, type FormError } from './form-errors.js';

export const TEST_PLATES_PATH = '/console/admin/test-plates';

/** The form field of one key parameter (prefixed, so no parameter name can clash with the form's own fields). */
export const valueField = (parameter: string): string => `value_${parameter}`;

export interface TestPlatesInput {
  readonly plates: ReadonlyArray<{ readonly operation: string; readonly lookupKey: string }>;
  /** The operations that have a key, so can have test plates. */
  readonly operations: readonly OperationDeclaration[];
  /** The operation of the add form. */
  readonly operation: OperationDeclaration;
  /** Values typed into the add form (by parameter name), shown again with an error. */
  readonly values?: Readonly<Record<string, string | undefined>> | undefined;
  readonly notice?: string | undefined;
  /** The add form that came back: at a value's field (valueField) or, for the plate as a whole, above them. */
  readonly error?: FormError | undefined;
}

/** The longest key value the add form takes (the route's schema). */
export const PLATE_VALUE_MAX = 64;

/** A stored key as "RegistrationNumber EG258MA, State NJ" (or the bare key for an operation no longer in the catalogue). */
function keyText(op: OperationDeclaration | undefined, key: string): Html {
  const values = splitKey(key);
  const params = op ? Catalogue.keyParameters(op) : [];
  if (params.length !== values.length) return html`<code>${key}</code>`;
  return html`${params.map((p, i) => html`${i > 0 ? ', ' : ''}<span class="muted">${p.name}</span> <code>${values[i] ?? ''}</code>`)}`;
}

function removeForm(viewer: Viewer, op: OperationDeclaration | undefined, operation: string, key: string): Html {
  if (!op) return html``;
  const values = splitKey(key);
  return html`<form class="inline" method="post" action="${TEST_PLATES_PATH}/remove" data-confirm="Make this plate cost credits again?">${csrfField(viewer)}<input type="hidden" name="operation" value="${operation}">${Catalogue.keyParameters(op).map((p, i) => html`<input type="hidden" name="${valueField(p.name)}" value="${values[i] ?? ''}">`)}<button type="submit" class="danger" aria-label="Remove test plate ${operation} ${key}">Remove</button></form>`;
}

/**
 * The free test plates (a lookup of one answers and costs no credit): the list, and for writers an
 * add form whose fields are the chosen operation's key parameters, and a remove button per plate.
 */
export function testPlatesPage(viewer: Viewer, input: TestPlatesInput): string {
  const byName = new Map(input.operations.map((op) => [op.name, op]));
  const op = input.operation;
  return page(
    'Test plates',
    html`${input.notice ? message('notice', input.notice) : ''}
<p>A lookup of a test plate answers like any other and <strong>costs no credit</strong>, whoever asks: integrators test with them. Key values are normalised as a lookup normalises them (<code>eg-258-ma</code> is <code>EG258MA</code>).</p>
<div class="table-wrap" role="region" aria-label="Test plates table" tabindex="0"><table data-testid="test-plates">
<thead><tr><th scope="col">Operation</th><th scope="col">Key</th>${viewer.canWrite ? html`<th scope="col">Actions</th>` : ''}</tr></thead>
<tbody>${
      input.plates.length === 0
        ? html`<tr><td colspan="${viewer.canWrite ? 3 : 2}" class="muted">No test plates.</td></tr>`
        : input.plates.map(
            (p) => html`<tr><td>${p.operation}</td><td>${keyText(byName.get(p.operation), p.lookupKey)}</td>${viewer.canWrite ? html`<td>${removeForm(viewer, byName.get(p.operation), p.operation, p.lookupKey)}</td>` : ''}</tr>`,
          )
    }</tbody></table></div>
${
  viewer.canWrite
    ? html`<section class="panel" aria-labelledby="add"><h2 id="add">Add a test plate</h2>
<form method="get" action="${TEST_PLATES_PATH}" class="row" aria-label="Choose the operation">
  <div><label for="tp-operation">Operation</label><select id="tp-operation" name="operation">${input.operations.map((o) => html`<option value="${o.name}"${o.name === op.name ? html` selected` : ''}>${o.name}</option>`)}</select></div>
  <div><button type="submit" class="secondary" data-follows="tp-operation">Choose</button></div>
</form>
<form method="post" action="${TEST_PLATES_PATH}" class="row">${csrfField(viewer)}<input type="hidden" name="operation" value="${op.name}">${formMessage(input.error, 'plate', Catalogue.keyParameters(op).map((p) => valueField(p.name)))}
  ${Catalogue.keyParameters(op).map(
    (p) =>
      html`<div><label for="tp-${p.name}">${op.name}: ${p.name}</label><input type="text" id="tp-${p.name}" name="${valueField(p.name)}" required value="${input.values?.[p.name] ?? ''}"${invalidAttrs(input.error, 'plate', valueField(p.name), `tp-${p.name}`, true)}>${hint(`tp-${p.name}`, `${p.description} (${atMost(PLATE_VALUE_MAX)})`)}${fieldMessage(input.error, 'plate', valueField(p.name), `tp-${p.name}`)}</div>`,
  )}
  <div><button type="submit">Add test plate</button></div>
</form></section>`
    : html`<p class="muted">Your role (${viewer.user.role}) reads only.</p>`
}`,
    viewer,
  );
}
