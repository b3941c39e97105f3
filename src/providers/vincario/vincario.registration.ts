import { servedOf, type ProviderRegistrar } from '../upstream/provider-registrar.js';
import { VincarioClient } from './vincario.client.js';
import { VincarioStolenProvider, VincarioVinProvider } from './vincario.provider.js';

/** Vincario API 3.2 (issue 32): VinCheck from its decode, CheckStolen from its stolen check. */
export const vincarioRegistrations: ProviderRegistrar = (context, config) => {
  if (!config.vincario) return [];
  const client = new VincarioClient(context, config.vincario);
  const { paid } = config.vincario;
  return [
    { operations: servedOf(paid, ['VinCheck']), paid: { provider: new VincarioVinProvider(client), settings: paid } },
    { operations: servedOf(paid, ['CheckStolen']), paid: { provider: new VincarioStolenProvider(client), settings: paid } },
  ];
};
