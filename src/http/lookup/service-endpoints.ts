import type { Catalogue } from '../../catalogue/catalogue.js';
import type { OperationDeclaration, ServiceId } from '../../catalogue/operation.js';
import { SERVICES, soapAction, type ServiceDefinition } from '../../catalogue/services.js';

/** A SOAP service as this instance serves it: its definition, configured namespace and operations. */
export interface ServiceEndpoint {
  readonly definition: ServiceDefinition;
  readonly namespace: string;
  readonly operations: readonly OperationDeclaration[];
  /** Exact, case-sensitive. */
  find(name: string): OperationDeclaration | undefined;
  findIgnoringCase(name: string): OperationDeclaration | undefined;
  /** The operation whose SOAPAction is exactly `action`. */
  findByAction(action: string): OperationDeclaration | undefined;
  action(op: OperationDeclaration): string;
}

export function serviceEndpoints(catalogue: Catalogue, namespaces: Readonly<Record<ServiceId, string>>): ServiceEndpoint[] {
  return (Object.keys(SERVICES) as ServiceId[]).map((id) => {
    const definition = SERVICES[id];
    const namespace = namespaces[id];
    const operations = catalogue.forService(id);
    const byName = new Map(operations.map((op) => [op.name, op]));
    const byLower = new Map(operations.map((op) => [op.name.toLowerCase(), op]));
    const byAction = new Map(operations.map((op) => [soapAction(namespace, op.name), op]));
    return {
      definition,
      namespace,
      operations,
      find: (name) => byName.get(name),
      findIgnoringCase: (name) => byLower.get(name.toLowerCase()),
      findByAction: (action) => byAction.get(action),
      action: (op) => soapAction(namespace, op.name),
    };
  });
}
