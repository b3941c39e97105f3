import { OPERATIONS } from './operations.js';
import type { DatasetKind, OperationDeclaration, ParameterDeclaration, ServiceId } from './operation.js';

/**
 * Read access to the operation declarations, indexed once. Every adapter asks the catalogue; no
 * adapter names an operation.
 */
export class Catalogue {
  readonly operations: readonly OperationDeclaration[];
  private readonly byName: ReadonlyMap<string, OperationDeclaration>;
  private readonly byLowerName: ReadonlyMap<string, OperationDeclaration>;

  constructor(operations: readonly OperationDeclaration[] = OPERATIONS) {
    this.operations = operations;
    this.byName = new Map(operations.map((op) => [op.name, op]));
    this.byLowerName = new Map(operations.map((op) => [op.name.toLowerCase(), op]));
  }

  /** Exact, case-sensitive lookup (method names are case-sensitive on every interface). */
  find(name: string): OperationDeclaration | undefined {
    return this.byName.get(name);
  }

  /** The operation a wrongly-cased name was meant to be, for a helpful error message. */
  findIgnoringCase(name: string): OperationDeclaration | undefined {
    return this.byLowerName.get(name.toLowerCase());
  }

  forService(service: ServiceId): OperationDeclaration[] {
    return this.operations.filter((op) => op.services.includes(service));
  }

  /** The parameters whose normalised values form the lookup key, in catalogue order. */
  static keyParameters(op: OperationDeclaration): readonly ParameterDeclaration[] {
    return derived(op).key;
  }

  /** Parameters a caller supplies (all but username). */
  static inputParameters(op: OperationDeclaration): readonly ParameterDeclaration[] {
    return derived(op).input;
  }

  /** Input parameters a ledger row records: all but the ignored ones. */
  static describedParameters(op: OperationDeclaration): readonly ParameterDeclaration[] {
    return derived(op).described;
  }

  /** The JSON interface's documented path shape after its prefix, e.g. `/CheckUSA/{RegistrationNumber}/{State}`. */
  static jsonPathShape(op: OperationDeclaration): string {
    return `/${op.name}${op.jsonPath.segments.map((s) => `/{${s.label}}`).join('')}`;
  }

  /** JSON path values the operation requires (its path shape minus the optional tail). */
  static requiredPathSegments(op: OperationDeclaration): number {
    return derived(op).requiredPathSegments;
  }

  /**
   * False for the operations of the original without a `username` parameter (CheckStolen...): the
   * XML bindings take their account from HTTP Basic, or answer anonymously where allowed.
   */
  static takesUsername(op: OperationDeclaration): boolean {
    return derived(op).takesUsername;
  }

  /** Operations that accept import records of the given dataset kind. */
  operationsOfKind(kind: DatasetKind): OperationDeclaration[] {
    return this.operations.filter((op) => op.dataset.kind === kind);
  }
}

/** What the lookup path derives from a declaration, computed once per declaration (every lookup asks). */
interface Derived {
  readonly key: readonly ParameterDeclaration[];
  readonly input: readonly ParameterDeclaration[];
  /** Input parameters a ledger row records (all but the ignored ones). */
  readonly described: readonly ParameterDeclaration[];
  /** JSON path values the operation requires (its path shape minus the optional tail). */
  readonly requiredPathSegments: number;
  readonly takesUsername: boolean;
}

const derivedOnce = new WeakMap<OperationDeclaration, Derived>();

function derived(op: OperationDeclaration): Derived {
  let lists = derivedOnce.get(op);
  if (!lists) {
    const input = Object.freeze(op.parameters.filter((p) => p.role !== 'username'));
    lists = {
      key: Object.freeze(op.parameters.filter((p) => p.role === 'key')),
      input,
      described: Object.freeze(input.filter((p) => p.role !== 'ignored')),
      requiredPathSegments: op.jsonPath.segments.filter((s) => !s.optional).length,
      takesUsername: op.parameters.some((p) => p.role === 'username'),
    };
    derivedOnce.set(op, lists);
  }
  return lists;
}

/**
 * The operations with the operator's prices (OPERATION_COSTS, docs/configuration.md) in place of
 * the declared ones. Names not in the catalogue were refused when the configuration was read.
 */
export function withCosts(
  operations: readonly OperationDeclaration[],
  costs: Readonly<Record<string, number>>,
): readonly OperationDeclaration[] {
  return operations.map((op) => (Object.hasOwn(costs, op.name) ? { ...op, cost: costs[op.name] ?? op.cost } : op));
}

/** Joins normalised key values into the single stored key ("H84JAE|NJ"). */
export function joinKey(values: readonly string[]): string {
  return values.join('|');
}

/** The normalised key values of a stored key, in parameter order (joinKey undone). */
export function splitKey(key: string): string[] {
  return key.split('|');
}
