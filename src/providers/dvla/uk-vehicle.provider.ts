import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { DvsaMotClient } from '../dvsa-mot/dvsa-mot.client.js';
import { readMotVehicle } from '../dvsa-mot/mot-history.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { unansweredAs } from '../upstream/upstream-source.js';
import type { DvlaClient } from './dvla.client.js';
import { readDvlaVehicle } from './dvla-vehicle.js';
import { ukVrm } from './uk-vrm.js';
import { ukVehicleJson, ukVehicleJsonFromMot } from './uk-vehicle.mapper.js';

/**
 * `Check` (UK): DVLA VES, plus the model from the DVSA MOT history when both are configured (VES
 * has no model, §1). DVLA decides found / not found / unavailable; a DVSA failure only leaves the
 * model out. With DVSA alone, the vehicle is built from the MOT history. Both are asked at once.
 */
export class UkVehicleProvider implements Provider {
  readonly name: string;

  constructor(
    private readonly dvla: DvlaClient | undefined,
    private readonly mot: DvsaMotClient | undefined,
  ) {
    this.name = [dvla?.name, mot?.name].filter((n) => n !== undefined).join('+');
  }

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const vrm = ukVrm(query.key);
    if (vrm === undefined) return { status: 'not-found' };
    const [vehicle, history] = await Promise.all([this.dvla?.vehicle(vrm), this.mot?.history(vrm)]);
    if (vehicle) {
      if (vehicle.status !== 'found') return unansweredAs(vehicle);
      const mot = history?.status === 'found' ? readMotVehicle(history.payload) : undefined;
      return { status: 'found', record: ukVehicleJson(readDvlaVehicle(vehicle.payload), mot), source: mot ? this.name : 'dvla' };
    }
    if (!history) return { status: 'not-found' };
    if (history.status !== 'found') return unansweredAs(history);
    return { status: 'found', record: ukVehicleJsonFromMot(readMotVehicle(history.payload)), source: 'dvsa-mot' };
  }
}
