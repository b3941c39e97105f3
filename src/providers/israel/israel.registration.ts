import type { ProviderRegistrar } from '../upstream/provider-registrar.js';
import { IsraelVehicleProvider } from './israel-vehicle.provider.js';
import { IsraelClient } from './israel.client.js';

/** Israel: `CheckIsrael` from the Ministry of Transport registers on data.gov.il. */
export const israelRegistrations: ProviderRegistrar = (context, config) =>
  config.israel ? [{ operations: ['CheckIsrael'], provider: new IsraelVehicleProvider(new IsraelClient(context, config.israel)) }] : [];
