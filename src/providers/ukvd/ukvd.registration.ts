import { servedOf, type ProviderRegistrar } from '../upstream/provider-registrar.js';
import { UkvdClient } from './ukvd.client.js';
import { UkvdMotProvider, UkvdVehicleProvider } from './ukvd.provider.js';

/**
 * UK Vehicle Data r2 (issue 32): the vehicle package for the three UK vehicle operations, the
 * MotHistoryDetails package for UKMOT. One client, so one cache partition and one breaker.
 */
export const ukvdRegistrations: ProviderRegistrar = (context, config) => {
  if (!config.ukvd) return [];
  const client = new UkvdClient(context, config.ukvd);
  const { paid } = config.ukvd;
  return [
    { operations: servedOf(paid, ['Check', 'CheckMotorBikeUK', 'CheckUKMinimal']), paid: { provider: new UkvdVehicleProvider(client, config.ukvd.packageName), settings: paid } },
    { operations: servedOf(paid, ['UKMOT']), paid: { provider: new UkvdMotProvider(client), settings: paid } },
  ];
};
