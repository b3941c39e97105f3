/**
 * Tolerant readers for upstream JSON. Upstream documents say "any field may be missing" (DVLA VES,
 * upstream-sources.md §1) and types drift (§9.1), so adapters read each field on its own: a field
 * of the wrong type is treated as absent instead of failing the whole answer.
 */

/** A parsed JSON object. */
export type JsonObject = Readonly<Record<string, unknown>>;

/** The value as an object, or undefined for arrays, null and primitives. */
export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

/** A non-empty string (trimmed), or undefined. Numbers are not converted: use `textField`. */
export function stringField(object: JsonObject, name: string): string | undefined {
  const value = object[name];
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** A string or a finite number, as trimmed text; for fields some sources send either way. */
export function textField(object: JsonObject, name: string): string | undefined {
  const value = object[name];
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  return stringField(object, name);
}

/** A finite number, or a string holding one ("1598"), or undefined. */
export function numberField(object: JsonObject, name: string): number | undefined {
  const value = object[name];
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

/** A boolean, or undefined. */
export function booleanField(object: JsonObject, name: string): boolean | undefined {
  const value = object[name];
  return typeof value === 'boolean' ? value : undefined;
}

/** The objects of an array field; other elements and a missing field give an empty list. */
export function objectArrayField(object: JsonObject, name: string): JsonObject[] {
  const value = object[name];
  if (!Array.isArray(value)) return [];
  const out: JsonObject[] = [];
  for (const item of value as unknown[]) {
    const o = asObject(item);
    if (o) out.push(o);
  }
  return out;
}

/**
 * The object with its undefined members left out, so a mapped record holds only what the upstream
 * gave (and `exactOptionalPropertyTypes` holds). Each field is type-checked against T.
 */
export function withoutUndefined<T extends object>(fields: { readonly [K in keyof T]-?: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as T;
}

/** Parses JSON text, or returns undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
