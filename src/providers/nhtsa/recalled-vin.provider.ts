import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { unansweredAs } from '../upstream/upstream-source.js';
import type { VinDecodeAnswer } from '../vin-offline/offline-vin.provider.js';
import type { NhtsaRecallsClient } from './nhtsa-recalls.client.js';
import { readRecallCampaigns, recallText } from './recall-text.mapper.js';

/** Decodes a VIN to make, model and model year (OfflineVinProvider does). */
export interface VinDecoding {
  decode(vin: string): Promise<VinDecodeAnswer>;
}

/**
 * CheckRecalledVIN: the VIN decoded offline (src/providers/vin-offline/, enriched by vPIC online
 * when NHTSA_ONLINE is on), then the NHTSA Recalls API asked by make, model and model year
 * (upstream-sources.md §10.4). The record is the answer text (`recallText`): one line per
 * campaign, empty when NHTSA has none. A VIN whose make, model or year cannot be decoded is not
 * found (nothing to ask NHTSA); a decoder or upstream failure is unavailable (costs nothing).
 */
export class RecalledVinProvider implements Provider {
  readonly name: string;

  constructor(
    private readonly vin: VinDecoding,
    private readonly client: NhtsaRecallsClient,
  ) {
    this.name = client.name;
  }

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const decoded = await this.vin.decode(query.key);
    if (decoded.status === 'unavailable') return decoded;
    if (decoded.status === 'unknown') return { status: 'not-found' };
    const { make, model, modelYear } = decoded.decode;
    // A thin decode (the online enrichment failed) may lack the model: asking again later may work.
    if (model === undefined || modelYear === undefined) {
      return decoded.final ? { status: 'not-found' } : { status: 'unavailable', reason: 'the VIN decode lacks the model while vPIC online is unavailable' };
    }
    const answer = await this.client.recalls({ make, model, modelYear });
    if (answer.status === 'unavailable') return unansweredAs(answer);
    // not-found is NHTSA's "400 with an empty results": a vehicle with no recalls.
    const campaigns = answer.status === 'found' ? readRecallCampaigns(answer.payload) : [];
    return { status: 'found', record: recallText(campaigns), source: this.name };
  }
}
