import type { ProviderRegistrar } from '../upstream/provider-registrar.js';
import { DvsaMotClient } from '../dvsa-mot/dvsa-mot.client.js';
import { UkMotProvider } from '../dvsa-mot/ukmot.provider.js';
import { DvlaClient } from './dvla.client.js';
import { UkVehicleProvider } from './uk-vehicle.provider.js';

/**
 * UK: `Check` and `CheckMotorBikeUK` from DVLA (+ the DVSA model; VES holds motorbikes with the
 * cars), and `CheckUKMinimal`, which reads Check's records (compat-notes "The original's whole
 * contract"); `UKMOT` from DVSA (+ DVLA's tax data).
 */
export const ukRegistrations: ProviderRegistrar = (context, config) => {
  const dvla = config.dvla ? new DvlaClient(context, config.dvla) : undefined;
  const mot = config.dvsaMot ? new DvsaMotClient(context, config.dvsaMot) : undefined;
  return [
    ...(dvla || mot ? [{ operations: ['Check', 'CheckMotorBikeUK', 'CheckUKMinimal'], provider: new UkVehicleProvider(dvla, mot) }] : []),
    ...(mot ? [{ operations: ['UKMOT'], provider: new UkMotProvider(mot, dvla) }] : []),
  ];
};
