import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { asObject } from '../upstream/json-reader.js';
import { foundAs, unansweredAs } from '../upstream/upstream-source.js';
import { norwayVehicleJson } from './norway-vehicle.mapper.js';
import type { VegvesenClient } from './vegvesen.client.js';

/** `CheckNorway` from Statens vegvesen, after the local store. */
export class NorwayVehicleProvider implements Provider {
  constructor(private readonly client: VegvesenClient) {}

  get name(): string {
    return this.client.name;
  }

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    // The query takes the plate without spaces (§5: `kjoretoyId.kjennemerke` is "EK 39085").
    const plate = query.key.replace(/[\s-]/g, '').toUpperCase();
    if (!/^[A-Z0-9ÆØÅ]{1,8}$/.test(plate)) return { status: 'not-found' };
    const answer = await this.client.vehicle(plate);
    if (answer.status !== 'found') return unansweredAs(answer);
    const record = asObject(answer.payload);
    const vehicle = record ? norwayVehicleJson(record) : undefined;
    if (!vehicle) return { status: 'unavailable', reason: `${this.name}: the vehicle record has no make` };
    return foundAs(answer, vehicle, this.name);
  }
}
