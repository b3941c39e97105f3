import { Catalogue, joinKey } from '../catalogue/catalogue.js';

/**
 * The stored key of a test plate: its key values normalised exactly as a lookup normalises them,
 * so a plate added as "eg-258-ma" matches the lookup of "EG258MA". The CLI and the admin API both
 * use it; each turns a refusal into its own error.
 */
export function testPlateKey(catalogue: Catalogue, operation: string, values: readonly string[]): { ok: true; key: string } | { ok: false; reason: string } {
  const op = catalogue.find(operation);
  if (!op) return { ok: false, reason: `unknown operation ${operation}` };
  const params = Catalogue.keyParameters(op);
  if (params.length === 0) return { ok: false, reason: `${operation} is a search, not a lookup by key, so it has no test plates` };
  if (values.length !== params.length) {
    return { ok: false, reason: `${operation} takes ${params.length} key value${params.length === 1 ? '' : 's'}: ${params.map((p) => p.name).join(' ')}` };
  }
  const parts: string[] = [];
  for (const [i, p] of params.entries()) {
    const outcome = p.rule?.normalise(values[i] ?? '') ?? { ok: true as const, value: values[i] ?? '' };
    if (!outcome.ok) return { ok: false, reason: `${p.name} ${outcome.reason}` };
    parts.push(outcome.value);
  }
  return { ok: true, key: joinKey(parts) };
}
