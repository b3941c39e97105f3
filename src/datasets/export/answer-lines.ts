import { Catalogue } from '../../catalogue/catalogue.js';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import { OPERATIONS } from '../../catalogue/operations.js';
import { codecOf, RESULT_CODECS } from '../../results/index.js';

/**
 * One answer of a paid upstream as the import format carries it (docs/import-format.md), before
 * its `source` and `fetchedAt`: the operation it answers, that operation's key parameters by name,
 * and the record the lookup served (the operation's codec renders it on every binding).
 */
export interface AnsweredRecord {
  readonly operation: string;
  readonly key: Readonly<Record<string, string>>;
  readonly record: unknown;
}

/**
 * What a paid upstream's cached payload answers (pure: no network, no store, no clock). `cacheKey`
 * and `payload` are a row of its upstream cache (UpstreamSource's key and what its fetch kept);
 * `operation`, when given, is the one operation that call was made for (the record file), else
 * every operation the cache would serve that payload to (`export --source`: one UKVD vehicle
 * package answers Check, CheckMotorBikeUK and CheckUKMinimal alike). A payload of another shape
 * answers nothing. Each adapter has one (src/providers/paid-answers.ts lists them).
 */
export type CachedAnswerReader = (cacheKey: string, payload: unknown, operation?: string) => readonly AnsweredRecord[];

const CATALOGUE = new Catalogue(OPERATIONS);

/** The answer of `operation` for the key parameter values `values` (in the operation's key order), or none when it is no operation. */
export function answerOf(operation: string, values: readonly string[], record: unknown): AnsweredRecord[] {
  const op = CATALOGUE.find(operation);
  if (!op) return [];
  return [{ operation: op.name, key: Object.fromEntries(Catalogue.keyParameters(op).map((p, i) => [p.name, values[i] ?? ''])), record }];
}

/** The operations of `served` a reader answers: the one asked (when it is among them), else all of them. */
export function askedOf(served: readonly string[], operation: string | undefined): readonly string[] {
  if (operation === undefined) return served;
  return served.includes(operation) ? [operation] : [];
}

/** Whether `record` is an answer with data for `op` (one the pipeline charges); an empty list is served free and not recorded. */
export function hasData(op: OperationDeclaration, record: unknown): boolean {
  const codec = codecOf(op.resultType);
  return codec.isChargeable(codec.fromRecord(record, { operation: op, baseUrl: '' }));
}

/** One line of the import format, with its source and time. */
export type ImportLine = Record<string, unknown> & { readonly operation: string; readonly source: string; readonly fetchedAt: string };

/**
 * The import lines of one answered record: one line, or for a ratings search (CheckEuroNCap,
 * whose import member holds one rating) one line per rating. `source` is the paid upstream's
 * name, which makes `import` keep the answer for its operation alone (kept-per-operation.ts).
 */
export function importLinesOf(answered: AnsweredRecord, op: OperationDeclaration, source: string, fetchedAt: string): ImportLine[] {
  const field = RESULT_CODECS[op.resultType].importPayload.field;
  const tail = { source, fetchedAt };
  if (op.dataset.kind === 'ncap') {
    const ratings = Array.isArray(answered.record) ? (answered.record as unknown[]) : [answered.record];
    return ratings.map((rating) => ({ operation: op.name, [field]: rating, ...tail }));
  }
  return [{ operation: op.name, key: answered.key, [field]: answered.record, ...tail }];
}
