import type { ProviderRegistrar } from '../upstream/provider-registrar.js';
import { NorwayVehicleProvider } from './norway-vehicle.provider.js';
import { VegvesenClient } from './vegvesen.client.js';

/** Norway: `CheckNorway` from Statens vegvesen's single lookup. */
export const vegvesenRegistrations: ProviderRegistrar = (context, config) =>
  config.vegvesen ? [{ operations: ['CheckNorway'], provider: new NorwayVehicleProvider(new VegvesenClient(context, config.vegvesen)) }] : [];
