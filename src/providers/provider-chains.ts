import type { OperationDeclaration } from '../catalogue/operation.js';
import type { Provider } from '../lookup/provider.js';

/** A provider and the operations it answers (after the local store). */
export interface ProviderRegistration {
  readonly operations: readonly string[];
  readonly provider: Provider;
}

/**
 * The provider chain of each operation: the local store first (imported records take precedence,
 * issue 4), then the registered providers in registration order.
 */
export function providerChains(local: Provider, registrations: readonly ProviderRegistration[]): (op: OperationDeclaration) => readonly Provider[] {
  const chains = new Map<string, Provider[]>();
  for (const registration of registrations) {
    for (const name of registration.operations) chains.set(name, [...(chains.get(name) ?? [local]), registration.provider]);
  }
  const localOnly: readonly Provider[] = [local];
  return (op) => chains.get(op.name) ?? localOnly;
}
