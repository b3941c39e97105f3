import type { OperationDeclaration } from '../catalogue/operation.js';
import type { Provider } from '../lookup/provider.js';

/**
 * A provider and the operations it answers (after the local store), or a wrapper every provider
 * of those operations' chains is wrapped in (an enrichment of their answers, such as the NHTSA
 * safety ratings), applied after the whole chain is built.
 */
export type ProviderRegistration =
  | { readonly operations: readonly string[]; readonly provider: Provider }
  | { readonly operations: readonly string[]; readonly wrap: (provider: Provider) => Provider };

/**
 * The provider chain of each operation: the local store first (imported records take precedence,
 * issue 4), then the registered providers in registration order, each wrapped by the wrappers
 * registered for the operation.
 */
export function providerChains(local: Provider, registrations: readonly ProviderRegistration[]): (op: OperationDeclaration) => readonly Provider[] {
  const chains = new Map<string, Provider[]>();
  for (const registration of registrations) {
    if (!('provider' in registration)) continue;
    for (const name of registration.operations) chains.set(name, [...(chains.get(name) ?? [local]), registration.provider]);
  }
  for (const registration of registrations) {
    if (!('wrap' in registration)) continue;
    for (const name of registration.operations) chains.set(name, (chains.get(name) ?? [local]).map(registration.wrap));
  }
  const localOnly: readonly Provider[] = [local];
  return (op) => chains.get(op.name) ?? localOnly;
}
