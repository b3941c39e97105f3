import { Catalogue, joinKey } from '../catalogue/catalogue.js';
import type { OperationDeclaration } from '../catalogue/operation.js';
import { LookupError } from './lookup-error.js';

/** Raw parameter values as a protocol decoded them, by parameter name; missing = undefined. */
export type RawArguments = Readonly<Record<string, string | undefined>>;

/** A validated, normalised lookup: what providers see. */
export interface LookupQuery {
  readonly operation: OperationDeclaration;
  /** Normalised values of every non-username parameter, by parameter name. */
  readonly values: Readonly<Record<string, string>>;
  /** The stored key: normalised key values joined in catalogue order ("H84JAE|NJ"). */
  readonly key: string;
}

/**
 * Validates and normalises the caller's values for an operation. All problems are reported at once
 * so a caller fixes them in one go; nothing here costs credits.
 */
export function buildQuery(op: OperationDeclaration, raw: RawArguments): LookupQuery {
  const values: Record<string, string> = Object.create(null) as Record<string, string>;
  const problems: string[] = [];
  for (const param of Catalogue.inputParameters(op)) {
    const given = raw[param.name] ?? '';
    if (given.trim() === '') {
      if (param.required) problems.push(`${param.name} is required`);
      else values[param.name] = '';
      continue;
    }
    if (!param.rule) {
      values[param.name] = given.trim();
      continue;
    }
    const outcome = param.rule.normalise(given);
    if (outcome.ok) values[param.name] = outcome.value;
    else problems.push(`${param.name} ${outcome.reason}`);
  }
  if (problems.length > 0) {
    throw new LookupError('INVALID_INPUT', `${op.name}: ${problems.join('; ')}`);
  }
  const key = joinKey(Catalogue.keyParameters(op).map((p) => values[p.name] ?? ''));
  return { operation: op, values, key };
}

/** The query as written to the ledger: key values and filters, for the operator to read. */
export function describeQuery(query: LookupQuery): string {
  return joinKey(Catalogue.describedParameters(query.operation).map((p) => query.values[p.name] ?? ''));
}
