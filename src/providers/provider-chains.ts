import type { OperationDeclaration } from '../catalogue/operation.js';
import type { Provider } from '../lookup/provider.js';
import type { PaidUpstream, UpstreamRouter } from './routing/upstream-router.js';

/**
 * A provider and the operations it answers (after the local store); a paid upstream, which goes to
 * the router (asked after every free provider, cheapest first: src/providers/routing/); or a
 * wrapper every provider of those operations' chains is wrapped in (an enrichment of their answers,
 * such as the NHTSA safety ratings), applied after the whole chain is built.
 *
 * A provider folder's registrar (`<folder>/<name>.registration.ts`, a ProviderRegistrar) returns
 * them; adding a provider is its folder plus one line in upstream-registrations.ts's REGISTRARS.
 * A paid one: `{ operations: servedOf(config.x.paid, [...]), paid: { provider: new XProvider(...), settings: config.x.paid } }`.
 */
export type ProviderRegistration =
  | { readonly operations: readonly string[]; readonly provider: Provider }
  | { readonly operations: readonly string[]; readonly paid: PaidUpstream }
  | { readonly operations: readonly string[]; readonly wrap: (provider: Provider) => Provider };

/** The provider a registration adds to its operations' chains (a paid upstream's own), or undefined for a wrapper. */
export function registeredProvider(registration: ProviderRegistration): Provider | undefined {
  if ('provider' in registration) return registration.provider;
  if ('paid' in registration) return registration.paid.provider;
  return undefined;
}

/**
 * The provider chain of each operation: the local store first (imported records take precedence,
 * issue 4), then the registered free providers in registration order, then (with a router) one
 * routed provider over the operation's paid upstreams, each wrapped by the wrappers registered for
 * the operation. Without a router, paid upstreams join the chain in registration order.
 */
export function providerChains(local: Provider, registrations: readonly ProviderRegistration[], router?: UpstreamRouter): (op: OperationDeclaration) => readonly Provider[] {
  const chains = new Map<string, Provider[]>();
  const paid = new Map<string, PaidUpstream[]>();
  for (const registration of registrations) {
    if ('provider' in registration) {
      for (const name of registration.operations) chains.set(name, [...(chains.get(name) ?? [local]), registration.provider]);
    } else if ('paid' in registration) {
      for (const name of registration.operations) paid.set(name, [...(paid.get(name) ?? []), registration.paid]);
    }
  }
  for (const [name, upstreams] of paid) {
    const tail = router ? [router.routed(upstreams)] : upstreams.map((u) => u.provider);
    chains.set(name, [...(chains.get(name) ?? [local]), ...tail]);
  }
  for (const registration of registrations) {
    if (!('wrap' in registration)) continue;
    for (const name of registration.operations) chains.set(name, (chains.get(name) ?? [local]).map(registration.wrap));
  }
  const localOnly: readonly Provider[] = [local];
  return (op) => chains.get(op.name) ?? localOnly;
}
