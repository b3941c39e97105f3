import type { ProviderConfig } from '../../config/provider-config.js';
import type { PaidUpstreamSettings } from '../../config/paid-upstream-config.js';
import type { Clock } from '../../shared/clock.js';
import type { ProviderRegistration } from '../provider-chains.js';
import type { RegcheckHooks } from '../regcheck/regcheck.client.js';
import type { OfflineVinProvider } from '../vin-offline/offline-vin.provider.js';
import type { AnswerSinks } from './answer-recording.js';
import type { UpstreamContext } from './upstream-source.js';

/** What a provider's registrar may need beside its configuration and the shared upstream context. */
export interface RegistrarDeps {
  readonly clock: Clock;
  /** The offline VinCheck provider, which NHTSA vPIC online enriches when NHTSA_ONLINE=true. */
  readonly vinOffline?: OfflineVinProvider | undefined;
  /** What the operator's side plugs into the original service's provider (its balance gate). */
  readonly regcheckHooks?: RegcheckHooks | undefined;
  /** The record file of each paid upstream that has one (`<NAME>_RECORD_FILE`); the server's, never a CLI command's. */
  readonly recordings?: AnswerSinks | undefined;
}

/**
 * A provider folder's one export to the app: its registrations for `providerChains` when the
 * operator configured it (`config.x` set), else none. Each folder has one
 * (`<folder>/<name>.registration.ts`), and `upstreamRegistrations` lists them, one line each, in
 * chain order. It builds nothing that touches the network until a lookup asks.
 */
export type ProviderRegistrar = (context: UpstreamContext, config: ProviderConfig, deps: RegistrarDeps) => ProviderRegistration[];

/** The operations of `served` that a paid upstream's `<NAME>_OPERATIONS` leaves it (all when unset). */
export function servedOf(paid: PaidUpstreamSettings, served: readonly string[]): string[] {
  return served.filter((name) => paid.operations.includes(name));
}
