import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { ukVrm } from '../dvla/uk-vrm.js';
import { foundAs, unansweredAs } from '../upstream/upstream-source.js';
import { isUkvdPayload as isPayload } from './ukvd-answers.js';
import { UKVD_MOT_PACKAGE, type UkvdClient } from './ukvd.client.js';
import { ukvdMotDocument, ukvdVehicleJson } from './ukvd.mapper.js';

/**
 * `Check`, `CheckMotorBikeUK` and `CheckUKMinimal` from UK Vehicle Data's vehicle package
 * (UKVD_PACKAGE): one answer per plate serves all three (CheckUKMinimal's codec keeps its subset).
 */
export class UkvdVehicleProvider implements Provider {
  readonly name = 'ukvd';

  constructor(
    private readonly client: UkvdClient,
    private readonly packageName: string,
  ) {}

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const vrm = ukVrm(query.key);
    if (vrm === undefined) return { status: 'not-found' };
    const answer = await this.client.lookup(this.packageName, 'VehicleDetails', vrm, query.operation.name);
    if (answer.status !== 'found') return unansweredAs(answer);
    if (!isPayload(answer.payload)) return { status: 'unavailable', reason: 'ukvd: a cached answer of another shape' };
    return foundAs(answer, ukvdVehicleJson(answer.payload.results), this.name);
  }
}

/** `UKMOT` from UK Vehicle Data's MotHistoryDetails package. */
export class UkvdMotProvider implements Provider {
  readonly name = 'ukvd';

  constructor(private readonly client: UkvdClient) {}

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const vrm = ukVrm(query.key);
    if (vrm === undefined) return { status: 'not-found' };
    const answer = await this.client.lookup(UKVD_MOT_PACKAGE, 'MotHistoryDetails', vrm, query.operation.name);
    if (answer.status !== 'found') return unansweredAs(answer);
    if (!isPayload(answer.payload)) return { status: 'unavailable', reason: 'ukvd: a cached answer of another shape' };
    return foundAs(answer, ukvdMotDocument(answer.payload.results, vrm), this.name);
  }
}
