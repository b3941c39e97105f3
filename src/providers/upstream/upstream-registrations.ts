import type { SharedCache } from '../../redis/shared-cache.js';
import type { WaitClock } from '../../shared/wait-clock.js';
import type { Db } from '../../storage/database.js';
import type { ProviderConfig } from '../../config/provider-config.js';
import { carsxeRegistrations } from '../carsxe/carsxe.registration.js';
import { ukRegistrations } from '../dvla/uk.registration.js';
import { israelRegistrations } from '../israel/israel.registration.js';
import { nhtsaRegistrations } from '../nhtsa/nhtsa.registration.js';
import type { ProviderRegistration } from '../provider-chains.js';
import { rdwRegistrations } from '../rdw/rdw.registration.js';
import { regcheckRegistrations } from '../regcheck/regcheck.registration.js';
import type { UpstreamRouter } from '../routing/upstream-router.js';
import { ukvdRegistrations } from '../ukvd/ukvd.registration.js';
import { vegvesenRegistrations } from '../vegvesen/vegvesen.registration.js';
import { vincarioRegistrations } from '../vincario/vincario.registration.js';
import type { ProviderRegistrar, RegistrarDeps } from './provider-registrar.js';
import { UpstreamCacheRepository } from './upstream-cache.repository.js';
import { monitorOf, UpstreamMonitor } from './upstream-monitor.js';
import type { UpstreamContext } from './upstream-source.js';

export interface UpstreamDeps extends RegistrarDeps {
  readonly db: Db;
  /** The operator's provider settings (Config.providers). */
  readonly config: ProviderConfig;
  /**
   * The app's lookup observer: when it carries an UpstreamMonitor (the app's Metrics does, see
   * `monitorOf`), providers report to it, so /metrics and /readyz show them.
   */
  readonly observer?: object | undefined;
  /** Request budgets and retry pauses of the upstream HTTP clients (tests); real time when absent. */
  readonly waitClock?: WaitClock | undefined;
  /** The Redis-backed cache shared by every instance, when REDIS_URL is set. */
  readonly sharedCache?: SharedCache | undefined;
  /** The monitor providers report to, when the caller made it (it must be the router's too); else the observer's. */
  readonly monitor?: UpstreamMonitor | undefined;
  /** The router whose policies gate the paid upstreams (UpstreamContext.gate). */
  readonly router?: UpstreamRouter | undefined;
  /** Registrations built on this app's upstream context beside the configured ones (a test's fake paid upstreams). */
  readonly extra?: ((context: UpstreamContext) => ProviderRegistration[]) | undefined;
}

/**
 * Every provider folder's registrar, in chain order: adding a provider is its folder (with its
 * `<name>.registration.ts`, src/providers/upstream/provider-registrar.ts) and one line here.
 */
const REGISTRARS: readonly ProviderRegistrar[] = [
  ukRegistrations,
  rdwRegistrations,
  vegvesenRegistrations,
  israelRegistrations,
  nhtsaRegistrations,
  // Paid sources: the router asks them after every free one, cheapest first.
  ukvdRegistrations,
  vincarioRegistrations,
  carsxeRegistrations,
  regcheckRegistrations,
];

/**
 * The upstream providers the operator configured, as registrations for `providerChains` (each
 * after the local store), from the configuration read at start-up; builds nothing that touches
 * the network until a lookup asks.
 */
export function upstreamRegistrations(deps: UpstreamDeps): ProviderRegistration[] {
  const { config } = deps;
  const monitor = deps.monitor ?? monitorOf(deps.observer) ?? new UpstreamMonitor(() => deps.clock.now());
  for (const { provider, reason } of config.disabled) monitor.disabled(provider, reason);
  const router = deps.router;
  const context: UpstreamContext = {
    cache: new UpstreamCacheRepository(deps.db),
    clock: deps.clock,
    monitor,
    shared: deps.sharedCache,
    waitClock: deps.waitClock,
    ...(router ? { gate: (provider: string) => router.gate(provider) } : {}),
  };
  return [...REGISTRARS.flatMap((register) => register(context, config, deps)), ...(deps.extra?.(context) ?? [])];
}
