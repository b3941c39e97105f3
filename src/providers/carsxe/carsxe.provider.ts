import { Catalogue } from '../../catalogue/catalogue.js';
import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { foundAs, unansweredAs } from '../upstream/upstream-source.js';
import { isCarsxePayload as isPayload } from './carsxe-answers.js';
import { CARSXE_PLATE_OPERATIONS } from './carsxe-countries.js';
import type { CarsxeClient } from './carsxe.client.js';
import { carsxePlateVehicleJson, carsxeSpecsVehicleJson } from './carsxe.mapper.js';

/** Every `Check<Country>` of CARSXE_PLATE_OPERATIONS from CarsXE's v2 plate decoder. */
export class CarsxePlateProvider implements Provider {
  readonly name = 'carsxe';

  constructor(private readonly client: CarsxeClient) {}

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const op = query.operation;
    const shape = CARSXE_PLATE_OPERATIONS[op.name];
    if (!shape) return { status: 'not-found' };
    // The plate is the first key parameter; the state or province the second (its name varies:
    // State, state, Province); Pakistan's district is named.
    const keys = Catalogue.keyParameters(op);
    const plate = query.values[keys[0]?.name ?? ''] ?? '';
    const region =
      shape.region === 'state' ? { state: query.values[keys[1]?.name ?? ''] ?? '' } : shape.region === 'district' ? { district: query.values.district ?? '' } : {};
    const answer = await this.client.plate(plate, shape.country, region, op.name);
    if (answer.status !== 'found') return unansweredAs(answer);
    if (!isPayload(answer.payload, 'plate')) return { status: 'unavailable', reason: 'carsxe: a cached answer of another shape' };
    return foundAs(answer, carsxePlateVehicleJson(answer.payload.body, shape), this.name);
  }
}

/** `VinCheck` from CarsXE's `/specs`. */
export class CarsxeVinProvider implements Provider {
  readonly name = 'carsxe';

  constructor(private readonly client: CarsxeClient) {}

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const vin = query.key.toUpperCase();
    const answer = await this.client.specs(vin, query.operation.name);
    if (answer.status !== 'found') return unansweredAs(answer);
    if (!isPayload(answer.payload, 'specs')) return { status: 'unavailable', reason: 'carsxe: a cached answer of another shape' };
    return foundAs(answer, carsxeSpecsVehicleJson(answer.payload.body, vin), this.name);
  }
}
