import { Catalogue } from '../../catalogue/catalogue.js';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import type { FreeLedgerReason } from '../../accounts/ledger-queries.js';
import { whyFree } from './account-sections.js';
import { html, type Html } from './html.js';
import { csrfField, message, page, type Viewer } from './layout.js';
import { atMost, fieldMessage, hintIdOf, invalidAttrs, type FormError } from './form-errors.js';
import { operationGroups, type TryItSample } from './try-it-choices.js';

export const TRY_IT_PATH = '/console/account/try';

/** What a run through the page gave: the answer in both encodings and its cost, or the lookup's error. */
export type TryItOutcome =
  | {
      readonly ok: true;
      readonly json: string;
      readonly xml: string;
      readonly charged: number;
      readonly balance: number;
      /** Why it cost nothing, as its ledger row says (freeReasonWords of the lookup's outcome); null when charged. */
      readonly free: FreeLedgerReason | null;
    }
  | { readonly ok: false; readonly error: string };

export interface TryItInput {
  readonly operations: readonly OperationDeclaration[];
  readonly operation: OperationDeclaration;
  /** The values typed, by parameter name (shown again after a run). */
  readonly values: Readonly<Record<string, string | undefined>>;
  /** A value refused before the lookup ran (too long), at its field. */
  readonly error?: FormError | undefined;
  readonly outcome?: TryItOutcome;
  /** The operation was switched on a run without choosing it first: nothing ran (issue 26 item 6). */
  readonly switched?: boolean | undefined;
  /** An empty or low balance's notice, with the way to more credits. */
  readonly credit?: Html | undefined;
  /** The key filled in when the operation is chosen, named under its fields (issue 26 item 6). */
  readonly sample?: TryItSample | undefined;
}

function sampleLine(op: OperationDeclaration, sample: TryItSample | undefined): Html | string {
  if (sample === undefined) return '';
  const shown = Catalogue.inputParameters(op).filter((p) => sample.values[p.name] !== undefined);
  const values = shown.map((p, i) => html`${i === 0 ? '' : ', '}${shown.length === 1 ? '' : `${p.name} `}<code>${sample.values[p.name]}</code>`);
  return html`<p class="muted" data-testid="sample" data-source="${sample.source}">Sample: ${values} ${
    sample.source === 'test-plate' ? '(a test plate: free to look up)' : '(a vehicle of the sample data a new installation loads)'
  }.</p>`;
}

function operationOption(o: OperationDeclaration, chosen: OperationDeclaration): Html {
  return html`<option value="${o.name}"${o.name === chosen.name ? html` selected` : ''}>${o.name} (${o.cost} credit${o.cost === 1 ? '' : 's'})</option>`;
}

/** The longest value a parameter field takes (the route's schema). */
export const TRY_IT_VALUE_MAX = 200;

function parameterInputs(op: OperationDeclaration, values: TryItInput['values'], error: FormError | undefined): Html[] {
  return Catalogue.inputParameters(op).map(
    (p) => html`<div><label for="p-${p.name}">${p.name}${p.required ? '' : ' (optional)'}</label><input type="text" id="p-${p.name}" name="${p.name}" value="${values[p.name] ?? ''}"${p.required ? html` required` : ''}${invalidAttrs(error, 'try', p.name, `p-${p.name}`, true)}>
  <p class="muted" id="${hintIdOf(`p-${p.name}`)}">${p.description} (${atMost(TRY_IT_VALUE_MAX)})</p>${fieldMessage(error, 'try', p.name, `p-${p.name}`)}</div>`,
  );
}

function outcomeSection(outcome: TryItOutcome): Html {
  if (!outcome.ok) return html`<section aria-labelledby="answer"><h2 id="answer">Answer</h2>${message('error', outcome.error)}<p data-testid="cost">Charged: 0 credits (a lookup that fails costs nothing).</p></section>`;
  return html`<section aria-labelledby="answer"><h2 id="answer">Answer</h2>
<p data-testid="cost">${outcome.free !== null ? html`Charged: 0 credits — this lookup <strong data-testid="free-reason" data-reason="${outcome.free}">${whyFree(outcome.free)}</strong>` : html`Charged: <strong>${outcome.charged}</strong> credit${outcome.charged === 1 ? '' : 's'}`}. Balance now: <strong data-testid="try-balance">${outcome.balance}</strong>.</p>
<h3>JSON (as <code>/api/json.aspx</code> answers)</h3><pre data-testid="json-answer">${outcome.json}</pre>
<h3>XML (as the HTTP GET binding answers)</h3><pre data-testid="xml-answer">${outcome.xml}</pre></section>`;
}

/**
 * "Try it" (issue 18): a lookup run from the console as the session's account. The operation is
 * chosen with a plain GET form, its parameters are posted with the CSRF token; no script needed.
 */
export function tryItPage(viewer: Viewer, input: TryItInput): string {
  const op = input.operation;
  return page(
    'Try it',
    html`${input.credit}<p>Runs a real lookup as your account, through the same pipeline as the API: <strong>it spends your account's credits like an API call</strong> (a not-found answer and the test plates cost nothing).</p>
${input.switched ? message('notice', html`You chose ${op.name}: nothing was run. Fill in its fields, then run it.`) : ''}
<form method="post" action="${TRY_IT_PATH}" class="row" aria-label="Run a lookup">${csrfField(viewer)}
  <div><label for="t-operation">Operation</label><select id="t-operation" name="operation">${operationGroups(input.operations).map((g) => html`<optgroup label="${g.label}">${g.operations.map((o) => operationOption(o, op))}</optgroup>`)}</select></div>
  <div><button type="submit" class="secondary" name="choose" value="1" formnovalidate data-follows="t-operation">Choose</button></div>
  <input type="hidden" name="shown" value="${op.name}">
<section class="panel" aria-labelledby="run"><h2 id="run">${op.name}</h2><p class="muted">${op.label}</p>
  ${parameterInputs(op, input.values, input.error)}
  ${sampleLine(op, input.sample)}
  <div><button type="submit">Run lookup</button></div>
</section></form>
${input.outcome ? outcomeSection(input.outcome) : ''}
<p><a href="/console/account">Back to my account</a></p>`,
    viewer,
  );
}
