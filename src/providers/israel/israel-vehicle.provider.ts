import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { asObject } from '../upstream/json-reader.js';
import { foundAs, unansweredAs } from '../upstream/upstream-source.js';
import { registerOf, type IsraelClient, type IsraelPayload } from './israel.client.js';
import { israelVehicleJson } from './israel-vehicle.mapper.js';

/** Israeli plates are digits only: 7 or 8, historic and heavy-vehicle plates fewer (§10.1). */
const ISRAELI_PLATE = /^\d{1,8}$/;

/** `CheckIsrael` from the Ministry of Transport registers on data.gov.il, after the local store. */
export class IsraelVehicleProvider implements Provider {
  constructor(private readonly client: IsraelClient) {}

  get name(): string {
    return this.client.name;
  }

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const digits = query.key.replace(/[\s.-]/g, '');
    // Not a plate any register can hold: not found without asking (and without a credit).
    if (!ISRAELI_PLATE.test(digits) || /^0+$/.test(digits)) return { status: 'not-found' };
    // One key per vehicle: "04252235" and "4252235" are one plate (the archives pad to 8).
    const answer = await this.client.vehicle(digits.replace(/^0+/, ''));
    if (answer.status !== 'found') return unansweredAs(answer);
    const payload = asObject(answer.payload) as IsraelPayload | undefined;
    const record = payload ? asObject(payload.record) : undefined;
    const register = payload ? registerOf(payload) : undefined;
    const vehicle = payload && record && register ? israelVehicleJson(record, asObject(payload.model), register.status) : undefined;
    if (!vehicle) return { status: 'unavailable', reason: `${this.name}: the vehicle record has no make` };
    return foundAs(answer, vehicle, this.name);
  }
}
