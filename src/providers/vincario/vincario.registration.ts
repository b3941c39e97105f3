import { servedOf, type ProviderRegistrar } from '../upstream/provider-registrar.js';
import { VINCARIO_OPERATIONS } from './vincario-answers.js';
import { VincarioClient } from './vincario.client.js';
import { VincarioStolenProvider, VincarioVinProvider } from './vincario.provider.js';

/** Vincario API 3.2 (issue 32): VinCheck from its decode, CheckStolen from its stolen check. */
export const vincarioRegistrations: ProviderRegistrar = (context, config, deps) => {
  if (!config.vincario) return [];
  const { paid } = config.vincario;
  const client = new VincarioClient(context, config.vincario, deps.recordings?.of(paid.name));
  return [
    { operations: servedOf(paid, VINCARIO_OPERATIONS.decode), paid: { provider: new VincarioVinProvider(client), settings: paid } },
    { operations: servedOf(paid, VINCARIO_OPERATIONS['stolen-check']), paid: { provider: new VincarioStolenProvider(client), settings: paid } },
  ];
};
