/**
 * HTML for the console and the front page: a tagged template that escapes every interpolated
 * value unless it is already `Html` (made by this module). Forgetting to escape is impossible
 * by construction; trusting a string needs the explicit, greppable `unsafeRaw`.
 */

/** A fragment of HTML that is safe to place as is. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** What a template may interpolate: text (escaped), numbers, fragments, lists of them, nothing. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for element content and quoted attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.text;
  if (value === null || value === undefined || value === false || value === true) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** `html\`<p>${name}</p>\``: interpolations are escaped; booleans and null render nothing (for `cond && html\`...\``). */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i += 1) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Text the caller vouches for (static markup built in this folder, e.g. an SVG from numbers). */
export function unsafeRaw(text: string): Html {
  return new Html(text);
}
