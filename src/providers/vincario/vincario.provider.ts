import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { foundAs, unansweredAs } from '../upstream/upstream-source.js';
import { isVincarioPayload as isPayload } from './vincario-answers.js';
import type { VincarioClient } from './vincario.client.js';
import { stolenNameValues, vincarioVehicleJson } from './vincario.mapper.js';

/** The VIN of a query: VinCheck's `Vin`, CheckStolen's `vinNumber` (the key, normalised by the catalogue's VIN rule). */
function vinOf(query: LookupQuery): string {
  return query.key.toUpperCase();
}

/** `VinCheck` from Vincario's decode. */
export class VincarioVinProvider implements Provider {
  readonly name = 'vincario';

  constructor(private readonly client: VincarioClient) {}

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const vin = vinOf(query);
    const answer = await this.client.lookup('decode', vin, query.operation.name);
    if (answer.status !== 'found') return unansweredAs(answer);
    if (!isPayload(answer.payload, 'decode') || answer.payload.service !== 'decode') return { status: 'unavailable', reason: 'vincario: a cached answer of another shape' };
    return foundAs(answer, vincarioVehicleJson(answer.payload.decode, vin), this.name);
  }
}

/**
 * `CheckStolen` from Vincario's stolen check. A VIN no register reports is an answer, the empty
 * list (served free by its codec, and not passed on to a later source); a register that could not
 * verify it is no answer (unavailable).
 */
export class VincarioStolenProvider implements Provider {
  readonly name = 'vincario';

  constructor(private readonly client: VincarioClient) {}

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const answer = await this.client.lookup('stolen-check', vinOf(query), query.operation.name);
    if (answer.status !== 'found') return unansweredAs(answer);
    if (!isPayload(answer.payload, 'stolen-check') || answer.payload.service !== 'stolen-check') return { status: 'unavailable', reason: 'vincario: a cached answer of another shape' };
    return foundAs(answer, stolenNameValues(answer.payload.stolen), this.name);
  }
}
