import { asObject, objectArrayField, type JsonObject } from '../upstream/json-reader.js';

/**
 * The DataGrid of the original's CarSpecifications (compat-notes "The original's whole contract":
 * `json` string, `columnNames` ArrayOfString, `data` rows of ArrayOfString).
 */
export interface DataGridRecord {
  /** The rows as a JSON text: an array of objects, one per row, keyed by column name. */
  readonly json: string;
  readonly columnNames: readonly string[];
  /** One row per model variant, each value under the column of the same index ("" when absent). */
  readonly data: ReadonlyArray<readonly string[]>;
}

/** A spec's Value as text: vPIC sends strings; a number is written as text, anything else is "". */
function valueText(spec: JsonObject): string {
  const value = spec.Value;
  if (typeof value === 'string') return value.trim();
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : '';
}

/**
 * vPIC's Canadian specifications `Results` as a DataGrid (upstream-sources.md §10.6 "Mapping
 * hint"): the columns are the distinct spec `Name`s in first-seen order, one row per result, and
 * rows whose `Model` is empty are skipped (vPIC has such rows, e.g. 1982 Ford). Undefined when no
 * row is left.
 */
export function carSpecificationsGrid(results: unknown): DataGridRecord | undefined {
  const columns: string[] = [];
  const rows: Array<Map<string, string>> = [];
  for (const item of Array.isArray(results) ? (results as unknown[]) : []) {
    const result = asObject(item);
    if (!result) continue;
    const row = new Map<string, string>();
    for (const spec of objectArrayField(result, 'Specs')) {
      const name = typeof spec.Name === 'string' ? spec.Name.trim() : '';
      if (name === '' || row.has(name)) continue;
      row.set(name, valueText(spec));
    }
    if ((row.get('Model') ?? '') === '') continue;
    for (const name of row.keys()) if (!columns.includes(name)) columns.push(name);
    rows.push(row);
  }
  if (rows.length === 0) return undefined;
  const data = rows.map((row) => columns.map((name) => row.get(name) ?? ''));
  const json = JSON.stringify(data.map((values) => Object.fromEntries(columns.map((name, i) => [name, values[i] ?? '']))));
  return { json, columnNames: columns, data };
}
