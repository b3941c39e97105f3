import type { ProviderRegistration } from '../provider-chains.js';
import type { ProviderRegistrar } from '../upstream/provider-registrar.js';
import { CanadianSpecsClient } from './canadian-specs.client.js';
import { CarSpecificationsProvider } from './car-specifications.provider.js';
import { NhtsaRatingsClient } from './nhtsa-ratings.client.js';
import { NhtsaRecallsClient } from './nhtsa-recalls.client.js';
import { NhtsaVinEnricher } from './nhtsa-vin-enricher.js';
import { NhtsaClient } from './nhtsa.client.js';
import { RecalledVinProvider } from './recalled-vin.provider.js';
import { RATED_OPERATIONS, SafetyRatingsProvider } from './safety-ratings.enricher.js';

/**
 * US recalls and Canadian specifications (upstream-sources.md §10.4, §10.6), behind
 * `CheckRecalledVIN` (a `string`) and `CarSpecifications` (a `DataGrid`); the safety ratings and
 * vPIC online, which answer no operation of their own but enrich others. The recalls need the
 * offline VIN decoder for make, model and year.
 */
export const nhtsaRegistrations: ProviderRegistrar = (context, config, deps) => {
  // vPIC online fills in thin offline VIN decodes.
  if (config.nhtsa && deps.vinOffline) deps.vinOffline.enrichWith(new NhtsaVinEnricher(new NhtsaClient(context, config.nhtsa)));
  const registrations: ProviderRegistration[] = [];
  if (config.nhtsaRecalls && deps.vinOffline) {
    registrations.push({ operations: ['CheckRecalledVIN'], provider: new RecalledVinProvider(deps.vinOffline, new NhtsaRecallsClient(context, config.nhtsaRecalls)) });
  }
  if (config.nhtsaRatings) {
    // An enrichment, not a provider: every provider of VinCheck and CheckUSA (the local store's
    // imported records too) has its found vehicles rated.
    const ratings = new NhtsaRatingsClient(context, config.nhtsaRatings);
    registrations.push({ operations: RATED_OPERATIONS, wrap: (provider) => new SafetyRatingsProvider(provider, ratings) });
  }
  if (config.canadaSpecs) {
    registrations.push({ operations: ['CarSpecifications'], provider: new CarSpecificationsProvider(new CanadianSpecsClient(context, config.canadaSpecs), deps.clock) });
  }
  return registrations;
};
