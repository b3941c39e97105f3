import type { SharedCache } from '../../redis/shared-cache.js';
import type { Clock } from '../../shared/clock.js';
import type { WaitClock } from '../../shared/wait-clock.js';
import type { Db } from '../../storage/database.js';
import { DvlaClient } from '../dvla/dvla.client.js';
import { UkVehicleProvider } from '../dvla/uk-vehicle.provider.js';
import { DvsaMotClient } from '../dvsa-mot/dvsa-mot.client.js';
import { UkMotProvider } from '../dvsa-mot/ukmot.provider.js';
import { NhtsaClient } from '../nhtsa/nhtsa.client.js';
import { NhtsaVinEnricher } from '../nhtsa/nhtsa-vin-enricher.js';
import { CanadianSpecsClient } from '../nhtsa/canadian-specs.client.js';
import { CarSpecificationsProvider } from '../nhtsa/car-specifications.provider.js';
import { NhtsaRecallsClient } from '../nhtsa/nhtsa-recalls.client.js';
import { RecalledVinProvider } from '../nhtsa/recalled-vin.provider.js';
import { NhtsaRatingsClient } from '../nhtsa/nhtsa-ratings.client.js';
import { RATED_OPERATIONS, SafetyRatingsProvider } from '../nhtsa/safety-ratings.enricher.js';
import type { ProviderRegistration } from '../provider-chains.js';
import type { OfflineVinProvider } from '../vin-offline/offline-vin.provider.js';
import { NorwayVehicleProvider } from '../vegvesen/norway-vehicle.provider.js';
import { VegvesenClient } from '../vegvesen/vegvesen.client.js';
import { IsraelClient } from '../israel/israel.client.js';
import { IsraelVehicleProvider } from '../israel/israel-vehicle.provider.js';
import { RdwClient } from '../rdw/rdw.client.js';
import { RdwVehicleProvider } from '../rdw/rdw-vehicle.provider.js';
import { RegcheckClient, type RegcheckHooks } from '../regcheck/regcheck.client.js';
import { RegcheckProvider } from '../regcheck/regcheck.provider.js';
import { UkvdClient } from '../ukvd/ukvd.client.js';
import { UkvdMotProvider, UkvdVehicleProvider } from '../ukvd/ukvd.provider.js';
import { VincarioClient } from '../vincario/vincario.client.js';
import { VincarioStolenProvider, VincarioVinProvider } from '../vincario/vincario.provider.js';
import { CarsxeClient } from '../carsxe/carsxe.client.js';
import { CarsxePlateProvider, CarsxeVinProvider } from '../carsxe/carsxe.provider.js';
import { CARSXE_PLATE_OPERATIONS } from '../carsxe/carsxe-countries.js';
import type { PaidUpstreamSettings, ProviderConfig } from '../../config/provider-config.js';
import { UpstreamCacheRepository } from './upstream-cache.repository.js';
import type { AnswerSinks } from './answer-recording.js';
import { UKVD_MOT_OPERATIONS, UKVD_VEHICLE_OPERATIONS } from '../ukvd/ukvd-answers.js';
import { VINCARIO_OPERATIONS } from '../vincario/vincario-answers.js';
import { CARSXE_VIN_OPERATIONS } from '../carsxe/carsxe-answers.js';
import { monitorOf, UpstreamMonitor } from './upstream-monitor.js';
import type { UpstreamContext } from './upstream-source.js';
import type { UpstreamRouter } from '../routing/upstream-router.js';

export interface UpstreamDeps {
  readonly db: Db;
  readonly clock: Clock;
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
  /** The offline VinCheck provider, which NHTSA vPIC online enriches when NHTSA_ONLINE=true. */
  readonly vinOffline?: OfflineVinProvider | undefined;
  /** What the operator's side plugs into the original service's provider (its balance gate). */
  readonly regcheckHooks?: RegcheckHooks | undefined;
  /** The record file of each paid upstream that has one (`<NAME>_RECORD_FILE`); the server's, never a CLI command's. */
  readonly recordings?: AnswerSinks | undefined;
  /** The monitor providers report to, when the caller made it (it must be the router's too); else the observer's. */
  readonly monitor?: UpstreamMonitor | undefined;
  /** The router whose policies gate the paid upstreams (UpstreamContext.gate). */
  readonly router?: UpstreamRouter | undefined;
  /** Registrations built on this app's upstream context beside the configured ones (a test's fake paid upstreams). */
  readonly extra?: ((context: UpstreamContext) => ProviderRegistration[]) | undefined;
}

/**
 * UK: `Check` and `CheckMotorBikeUK` from DVLA (+ the DVSA model; VES holds motorbikes with the
 * cars), and `CheckUKMinimal`, which reads Check's records (compat-notes "The original's whole
 * contract"); `UKMOT` from DVSA (+ DVLA's tax data).
 */
function ukRegistrations(context: UpstreamContext, config: ProviderConfig): ProviderRegistration[] {
  const dvla = config.dvla ? DvlaClient.create(context, config.dvla) : undefined;
  const mot = config.dvsaMot ? DvsaMotClient.create(context, config.dvsaMot) : undefined;
  const registrations: ProviderRegistration[] = [];
  if (dvla || mot) registrations.push({ operations: ['Check', 'CheckMotorBikeUK', 'CheckUKMinimal'], provider: new UkVehicleProvider(dvla, mot) });
  if (mot) registrations.push({ operations: ['UKMOT'], provider: new UkMotProvider(mot, dvla) });
  return registrations;
}

/** Netherlands: `CheckNetherlands` from RDW Open Data, after imported RDW data. */
function netherlandsRegistrations(context: UpstreamContext, config: ProviderConfig): ProviderRegistration[] {
  return config.rdw ? [{ operations: ['CheckNetherlands'], provider: new RdwVehicleProvider(RdwClient.create(context, config.rdw)) }] : [];
}

/** Norway: `CheckNorway` from Statens vegvesen's single lookup. */
function norwayRegistrations(context: UpstreamContext, config: ProviderConfig): ProviderRegistration[] {
  return config.vegvesen ? [{ operations: ['CheckNorway'], provider: new NorwayVehicleProvider(VegvesenClient.create(context, config.vegvesen)) }] : [];
}

/** Israel: `CheckIsrael` from the Ministry of Transport registers on data.gov.il. */
function israelRegistrations(context: UpstreamContext, config: ProviderConfig): ProviderRegistration[] {
  return config.israel ? [{ operations: ['CheckIsrael'], provider: new IsraelVehicleProvider(IsraelClient.create(context, config.israel)) }] : [];
}

/**
 * US recalls and Canadian specifications (upstream-sources.md §10.4, §10.6), behind
 * `CheckRecalledVIN` (a `string`) and `CarSpecifications` (a `DataGrid`). The recalls need the
 * offline VIN decoder for make, model and year.
 */
function nhtsaRegistrations(context: UpstreamContext, config: ProviderConfig, deps: UpstreamDeps): ProviderRegistration[] {
  const registrations: ProviderRegistration[] = [];
  if (config.nhtsaRecalls && deps.vinOffline) {
    registrations.push({ operations: ['CheckRecalledVIN'], provider: new RecalledVinProvider(deps.vinOffline, NhtsaRecallsClient.create(context, config.nhtsaRecalls)) });
  }
  if (config.nhtsaRatings) {
    // An enrichment, not a provider: every provider of VinCheck and CheckUSA (the local store's
    // imported records too) has its found vehicles rated.
    const ratings = NhtsaRatingsClient.create(context, config.nhtsaRatings);
    registrations.push({ operations: RATED_OPERATIONS, wrap: (provider) => new SafetyRatingsProvider(provider, ratings) });
  }
  if (config.canadaSpecs) {
    registrations.push({ operations: ['CarSpecifications'], provider: new CarSpecificationsProvider(CanadianSpecsClient.create(context, config.canadaSpecs), deps.clock) });
  }
  return registrations;
}

/**
 * UK Vehicle Data r2 (issue 32): the vehicle package for the three UK vehicle operations, the
 * MotHistoryDetails package for UKMOT. One client, so one cache partition and one breaker.
 */
function ukvdRegistrations(context: UpstreamContext, config: ProviderConfig, deps: UpstreamDeps): ProviderRegistration[] {
  if (!config.ukvd) return [];
  const { paid } = config.ukvd;
  const client = UkvdClient.create(context, config.ukvd, deps.recordings?.of(paid.name));
  return [
    { operations: servedOf(paid, UKVD_VEHICLE_OPERATIONS), paid: { provider: new UkvdVehicleProvider(client, config.ukvd.packageName), settings: paid } },
    { operations: servedOf(paid, UKVD_MOT_OPERATIONS), paid: { provider: new UkvdMotProvider(client), settings: paid } },
  ];
}

/** The operations of `served` that a paid upstream's `<NAME>_OPERATIONS` leaves it (all when unset). */
function servedOf(paid: PaidUpstreamSettings, served: readonly string[]): string[] {
  return served.filter((name) => paid.operations.includes(name));
}

/** Vincario API 3.2 (issue 32): VinCheck from its decode, CheckStolen from its stolen check. */
function vincarioRegistrations(context: UpstreamContext, config: ProviderConfig, deps: UpstreamDeps): ProviderRegistration[] {
  if (!config.vincario) return [];
  const { paid } = config.vincario;
  const client = VincarioClient.create(context, config.vincario, deps.recordings?.of(paid.name));
  return [
    { operations: servedOf(paid, VINCARIO_OPERATIONS.decode), paid: { provider: new VincarioVinProvider(client), settings: paid } },
    { operations: servedOf(paid, VINCARIO_OPERATIONS['stolen-check']), paid: { provider: new VincarioStolenProvider(client), settings: paid } },
  ];
}

/** CarsXE (issue 32): its plate decoder for the countries it lists, `/specs` for VinCheck. */
function carsxeRegistrations(context: UpstreamContext, config: ProviderConfig, deps: UpstreamDeps): ProviderRegistration[] {
  if (!config.carsxe) return [];
  const { paid } = config.carsxe;
  const client = CarsxeClient.create(context, config.carsxe, deps.recordings?.of(paid.name));
  return [
    { operations: servedOf(paid, Object.keys(CARSXE_PLATE_OPERATIONS)), paid: { provider: new CarsxePlateProvider(client), settings: paid } },
    { operations: servedOf(paid, CARSXE_VIN_OPERATIONS), paid: { provider: new CarsxeVinProvider(client), settings: paid } },
  ];
}

/**
 * The original service (issue 24), registered last so it is the last of every chain: the paid
 * source is asked only when the store and the free public registers do not know the vehicle.
 */
function regcheckRegistrations(context: UpstreamContext, config: ProviderConfig, deps: UpstreamDeps): ProviderRegistration[] {
  if (!config.regcheck) return [];
  return [{ operations: config.regcheck.operations, paid: { provider: new RegcheckProvider(RegcheckClient.create(context, config.regcheck, deps.regcheckHooks ?? {}, deps.recordings?.of(config.regcheck.paid.name))), settings: config.regcheck.paid } }];
}

/**
 * The upstream providers the operator configured, as registrations for `providerChains` (each
 * after the local store), from the configuration read at start-up; builds nothing that touches
 * the network until a lookup asks. Add a country's providers here.
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
  // NHTSA answers no operation of its own: it fills in thin offline VIN decodes.
  if (config.nhtsa && deps.vinOffline) deps.vinOffline.enrichWith(new NhtsaVinEnricher(NhtsaClient.create(context, config.nhtsa)));
  return [
    ...ukRegistrations(context, config),
    ...netherlandsRegistrations(context, config),
    ...norwayRegistrations(context, config),
    ...israelRegistrations(context, config),
    ...nhtsaRegistrations(context, config, deps),
    // Paid sources: the router asks them after every free one, cheapest first.
    ...ukvdRegistrations(context, config, deps),
    ...vincarioRegistrations(context, config, deps),
    ...carsxeRegistrations(context, config, deps),
    ...regcheckRegistrations(context, config, deps),
    ...(deps.extra?.(context) ?? []),
  ];
}
