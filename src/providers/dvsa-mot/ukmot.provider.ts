import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { DvlaClient } from '../dvla/dvla.client.js';
import { readDvlaVehicle } from '../dvla/dvla-vehicle.js';
import { ukVrm } from '../dvla/uk-vrm.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { unansweredAs } from '../upstream/upstream-source.js';
import type { DvsaMotClient } from './dvsa-mot.client.js';
import { readMotVehicle } from './mot-history.js';
import { ukMotDocument } from './ukmot.mapper.js';

/**
 * `UKMOT`: the DVSA MOT history, with the tax date and DVLA's statuses when DVLA is configured too
 * (the MOT API has no tax data). DVSA decides found / not found / unavailable; a DVLA failure only
 * leaves those fields out. Both are asked at once.
 */
export class UkMotProvider implements Provider {
  readonly name: string;

  constructor(
    private readonly mot: DvsaMotClient,
    private readonly dvla: DvlaClient | undefined,
  ) {
    this.name = dvla ? `${mot.name}+${dvla.name}` : mot.name;
  }

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const vrm = ukVrm(query.key);
    if (vrm === undefined) return { status: 'not-found' };
    const [history, vehicle] = await Promise.all([this.mot.history(vrm), this.dvla?.vehicle(vrm)]);
    if (history.status !== 'found') return unansweredAs(history);
    const dvla = vehicle?.status === 'found' ? readDvlaVehicle(vehicle.payload) : undefined;
    return { status: 'found', record: ukMotDocument(readMotVehicle(history.payload), dvla), source: dvla ? this.name : this.mot.name };
  }
}
