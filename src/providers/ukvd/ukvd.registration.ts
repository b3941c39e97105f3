import { servedOf, type ProviderRegistrar } from '../upstream/provider-registrar.js';
import { UKVD_MOT_OPERATIONS, UKVD_VEHICLE_OPERATIONS } from './ukvd-answers.js';
import { UkvdClient } from './ukvd.client.js';
import { UkvdMotProvider, UkvdVehicleProvider } from './ukvd.provider.js';

/**
 * UK Vehicle Data r2 (issue 32): the vehicle package for the three UK vehicle operations, the
 * MotHistoryDetails package for UKMOT. One client, so one cache partition and one breaker.
 */
export const ukvdRegistrations: ProviderRegistrar = (context, config, deps) => {
  if (!config.ukvd) return [];
  const { paid } = config.ukvd;
  const client = new UkvdClient(context, config.ukvd, deps.recordings?.of(paid.name));
  return [
    { operations: servedOf(paid, UKVD_VEHICLE_OPERATIONS), paid: { provider: new UkvdVehicleProvider(client, config.ukvd.packageName), settings: paid } },
    { operations: servedOf(paid, UKVD_MOT_OPERATIONS), paid: { provider: new UkvdMotProvider(client), settings: paid } },
  ];
};
