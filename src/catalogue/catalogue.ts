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
  static keyParameters(op: OperationDeclaration): ParameterDeclaration[] {
    return op.parameters.filter((p) => p.role === 'key');
  }

  /** Parameters a caller supplies (all but username). */
  static inputParameters(op: OperationDeclaration): ParameterDeclaration[] {
    return op.parameters.filter((p) => p.role !== 'username');
  }

  /** Operations that accept import records of the given dataset kind. */
  operationsOfKind(kind: DatasetKind): OperationDeclaration[] {
    return this.operations.filter((op) => op.dataset.kind === kind);
  }
}

/** Joins normalised key values into the single stored key ("H84JAE|NJ"). */
export function joinKey(values: readonly string[]): string {
  return values.join('|');
}
