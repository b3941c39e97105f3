import { servedOf, type ProviderRegistrar } from '../upstream/provider-registrar.js';
import { CARSXE_PLATE_OPERATIONS } from './carsxe-countries.js';
import { CARSXE_VIN_OPERATIONS } from './carsxe-answers.js';
import { CarsxeClient } from './carsxe.client.js';
import { CarsxePlateProvider, CarsxeVinProvider } from './carsxe.provider.js';

/** CarsXE (issue 32): its plate decoder for the countries it lists, `/specs` for VinCheck. */
export const carsxeRegistrations: ProviderRegistrar = (context, config, deps) => {
  if (!config.carsxe) return [];
  const { paid } = config.carsxe;
  const client = new CarsxeClient(context, config.carsxe, deps.recordings?.of(paid.name));
  return [
    { operations: servedOf(paid, Object.keys(CARSXE_PLATE_OPERATIONS)), paid: { provider: new CarsxePlateProvider(client), settings: paid } },
    { operations: servedOf(paid, CARSXE_VIN_OPERATIONS), paid: { provider: new CarsxeVinProvider(client), settings: paid } },
  ];
};
