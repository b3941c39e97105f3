/** Text and date formats of the UK answers (compat-notes "Data shapes"), shared by Check and UKMOT. */

/** "MERCEDES-BENZ" -> "Mercedes-Benz", "HYBRID ELECTRIC" -> "Hybrid Electric" (as UK Descriptions read). */
export function titleCase(text: string): string {
  return text.toLowerCase().replace(/(^|[\s\-/(])(\p{L})/gu, (_m, before: string, letter: string) => `${before}${letter.toUpperCase()}`);
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})/;
const DOTTED_DATE = /^(\d{4})\.(\d{2})\.(\d{2})/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

function dateParts(text: string): [string, string, string] | undefined {
  const m = ISO_DATE.exec(text) ?? DOTTED_DATE.exec(text);
  return m?.[1] !== undefined && m[2] !== undefined && m[3] !== undefined ? [m[1], m[2], m[3]] : undefined;
}

/** "2026-05-14" (or "2026.05.14") -> "2026.05.14"; other text is returned unchanged. */
export function dottedDate(text: string): string {
  const p = dateParts(text);
  return p ? p.join('.') : text;
}

/** "2026-03-01" -> "01 Mar 2026" (UKMOT taxDate); other text is returned unchanged. */
export function longDate(text: string): string {
  const p = dateParts(text);
  const month = p ? MONTHS[Number(p[1]) - 1] : undefined;
  return p && month ? `${p[2]} ${month} ${p[0]}` : text;
}

/** The year of "2012-03", "2012-03-01" or "2012.03.01", as text. */
export function yearOf(text: string | undefined): string | undefined {
  const m = text === undefined ? null : /^(\d{4})[-.]/.exec(text);
  return m?.[1];
}
