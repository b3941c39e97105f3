import type { FastifyError, FastifySchemaValidationError } from 'fastify';
import { domainError } from '../auth/api-auth.js';
import { html, type Html } from './html.js';

/**
 * A form that came back with an error (issue 26 item 3): which form, the field at fault, the
 * message in plain words, and what was typed, so the page shows the form again with the message
 * next to its field and the values kept, instead of a separate error page.
 */
export interface FormError {
  readonly form: string;
  readonly field: string | undefined;
  readonly text: string;
  readonly values: Readonly<Record<string, string>>;
}

/** How the console names a form field to a person, and what its pattern allows. */
const FIELDS: Readonly<Record<string, { label: string; allowed?: string }>> = {
  username: { label: 'user name', allowed: 'letters, digits and . _ @ - (no spaces)' },
  name: { label: 'name', allowed: 'letters, digits and . _ @ - (no spaces)' },
  credits: { label: 'starting credits' },
  amount: { label: 'amount' },
  reference: { label: 'reference' },
  note: { label: 'note' },
  operation: { label: 'change' },
  url: { label: 'URL' },
  perSecond: { label: 'limit per second' },
  perDay: { label: 'limit per day' },
  description: { label: 'description' },
  thresholds: { label: 'thresholds' },
  token: { label: 'invitation code' },
  password: { label: 'password' },
  currentPassword: { label: 'current password' },
  newPassword: { label: 'new password' },
  confirm: { label: 'password again' },
  source: { label: 'source name', allowed: 'letters, digits and . _ -' },
  search: { label: 'search' },
  actor: { label: 'who' },
  action: { label: 'action' },
  target: { label: 'target' },
};

/**
 * Fields whose typed value is never sent back in a page: a password shown again would sit in the
 * page's HTML (and the browser's cache of it).
 */
const SECRET_FIELDS: ReadonlySet<string> = new Set(['password', 'currentPassword', 'newPassword', 'confirm']);

/** "at most 64 characters": a field's limit as its hint says it (issue 26 item 10: said, never cut silently). */
export const atMost = (characters: number): string => `at most ${characters.toLocaleString('en')} characters`;

/** The id of a field's hint, for its aria-describedby. */
export const hintIdOf = (inputId: string): string => `${inputId}-hint`;

/** A field's hint, with the id its input's aria-describedby names (invalidAttrs `withHint`). */
export function hint(inputId: string, text: string): Html {
  return html`<span class="hint" id="${hintIdOf(inputId)}">${text}</span>`;
}

/** The field a validation error is about (body fields only). */
function fieldOf(first: FastifySchemaValidationError): string | undefined {
  const params = first.params as { missingProperty?: unknown; propertyName?: unknown };
  const fromPath = first.instancePath.replace(/^\//, '');
  if (fromPath !== '') return fromPath;
  return typeof params.missingProperty === 'string' ? params.missingProperty : undefined;
}

/** A schema validation error in plain words: "The amount must be at least 1." */
export function plainValidationError(error: FastifyError, typed: Readonly<Record<string, string>> = {}, labels: Readonly<Record<string, string>> = {}): { field: string | undefined; text: string } {
  const first = error.validation?.[0];
  if (!first) return { field: undefined, text: error.message };
  const field = fieldOf(first);
  const known = field === undefined ? undefined : FIELDS[field];
  const label = (field === undefined ? undefined : labels[field]) ?? known?.label ?? field ?? 'input';
  const params = first.params as { limit?: unknown };
  const limit = typeof params.limit === 'number' ? params.limit : undefined;
  const length = field === undefined ? undefined : typed[field]?.length;
  const Label = label.charAt(0).toUpperCase() + label.slice(1);
  switch (first.keyword) {
    case 'required':
      return { field, text: `${Label} is needed.` };
    case 'maxLength':
      return { field, text: `${Label} may be at most ${limit?.toLocaleString('en')} characters long${length === undefined ? '' : ` (this one has ${length.toLocaleString('en')})`}.` };
    case 'minLength':
      return { field, text: `${Label} is needed.` };
    case 'pattern':
      return { field, text: `${Label} may hold only ${known?.allowed ?? 'the characters the field allows'}.` };
    case 'minimum':
      return { field, text: `${Label} must be at least ${limit}.` };
    case 'maximum':
      return { field, text: `${Label} must be at most ${limit?.toLocaleString('en')}.` };
    case 'type':
      return { field, text: `${Label} must be a whole number.` };
    case 'enum':
      return { field, text: `${Label} must be one of the choices offered.` };
    default:
      return { field, text: `${Label} is not valid: ${first.message ?? 'check it'}.` };
  }
}

/** The form's fields as typed (the CSRF field left out), to show them again. */
export function typedValues(body: unknown): Record<string, string> {
  if (body === null || typeof body !== 'object') return {};
  return Object.fromEntries(
    Object.entries(body as Record<string, unknown>)
      .filter(([k, v]) => k !== '_csrf' && !SECRET_FIELDS.has(k) && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'))
      .map(([k, v]) => [k, String(v)]),
  );
}

/** The id of a field's error message, for its aria-describedby. */
export const errorIdOf = (inputId: string): string => `${inputId}-error`;

/**
 * What an input carries when its form came back with an error on it: aria-invalid and
 * aria-describedby pointing at the message (and at its hint, `withHint`, made by hint()). Without
 * an error on it, only the hint's aria-describedby.
 */
export function invalidAttrs(error: FormError | undefined, form: string, field: string, inputId: string, withHint = false): Html {
  const described = withHint ? ` ${hintIdOf(inputId)}` : '';
  if (error?.form === form && error.field === field) return html` aria-invalid="true" aria-describedby="${errorIdOf(inputId)}${described}"`;
  return withHint ? html` aria-describedby="${hintIdOf(inputId)}"` : html``;
}

/** The message under a field at fault (role alert: read out at once). */
export function fieldMessage(error: FormError | undefined, form: string, field: string, inputId: string): Html {
  return error?.form === form && error.field === field ? html`<p class="field-error" id="${errorIdOf(inputId)}" role="alert">${error.text}</p>` : html``;
}

/** A form's error not tied to one field (e.g. "that account exists"), shown at the top of the form. */
export function formMessage(error: FormError | undefined, form: string, fields: readonly string[]): Html {
  return error?.form === form && (error.field === undefined || !fields.includes(error.field)) ? html`<p class="field-error" role="alert">${error.text}</p>` : html``;
}

/** The value to show again in a field: what was typed, else its default. */
export function typed(error: FormError | undefined, form: string, field: string, fallback = ''): string {
  return error?.form === form ? (error.values[field] ?? fallback) : fallback;
}

/**
 * The FormError of a refused post: its schema validation (attachValidation) or a service's 4xx
 * refusal (e.g. "the account exists"); undefined for anything else, which the caller rethrows.
 * `labels` names fields the table above does not know (a form's generated fields).
 */
export function formErrorOf(form: string, body: unknown, validation: FastifyError | undefined, thrown?: unknown, labels?: Readonly<Record<string, string>>): FormError | undefined {
  const values = typedValues(body);
  if (validation) return { form, values, ...plainValidationError(validation, values, labels) };
  const domain = domainError(thrown);
  if (domain && domain.status < 500 && thrown instanceof Error) return { form, values, field: undefined, text: thrown.message.charAt(0).toUpperCase() + thrown.message.slice(1).replace(/\.?$/, '.') };
  return undefined;
}
