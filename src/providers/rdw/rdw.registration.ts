import type { ProviderRegistrar } from '../upstream/provider-registrar.js';
import { RdwVehicleProvider } from './rdw-vehicle.provider.js';
import { RdwClient } from './rdw.client.js';

/** Netherlands: `CheckNetherlands` from RDW Open Data, after imported RDW data. */
export const rdwRegistrations: ProviderRegistrar = (context, config) =>
  config.rdw ? [{ operations: ['CheckNetherlands'], provider: new RdwVehicleProvider(new RdwClient(context, config.rdw)) }] : [];
