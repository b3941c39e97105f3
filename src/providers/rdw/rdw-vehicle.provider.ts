import { REGISTER } from '../../datasets/import/rdw-columns.js';
import { RdwVehicleMapper } from '../../datasets/import/rdw-vehicle-mapper.js';
import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { asObject, numberField, objectArrayField, stringField, type JsonObject } from '../upstream/json-reader.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { foundAs, unansweredAs } from '../upstream/upstream-source.js';
import type { RdwClient } from './rdw.client.js';

/** The register's API field names, as a header row for the bulk importer's mapper. */
const API_HEADER: readonly string[] = Object.values(REGISTER).map((c) => c.api);

/**
 * The primary fuel of a plate: the row with the lowest `brandstof_volgnummer` (1 = primary), as
 * the bulk importer's fuel index keeps it (rdw-fuel-index.ts), so both paths give one document.
 */
export function primaryFuel(fuels: readonly JsonObject[]): string | undefined {
  let best: { readonly order: number; readonly name: string } | undefined;
  for (const row of fuels) {
    const name = stringField(row, 'brandstof_omschrijving');
    if (name === undefined) continue;
    const order = numberField(row, 'brandstof_volgnummer') ?? Number.MAX_SAFE_INTEGER;
    if (best === undefined || order < best.order) best = { order, name };
  }
  return best?.name;
}

/**
 * The CheckNetherlands vehicleJson of an RDW API answer, built by the bulk importer's
 * RdwVehicleMapper from the register row laid out as a CSV row with API field names, so an online
 * answer and an imported record of one plate are the same document (docs/providers.md).
 */
export function rdwVehicleJson(payload: unknown, query: LookupQuery): unknown {
  const answer = asObject(payload);
  const vehicle = answer ? asObject(answer.vehicle) : undefined;
  const rule = query.operation.parameters.find((p) => p.role === 'key')?.rule;
  if (!answer || !vehicle || !rule) throw new UpstreamError('bad-response', 'RDW answer without a vehicle row');
  const mapper = new RdwVehicleMapper(API_HEADER, rule);
  // RDW sends every value as a string (§3); a value of another type is treated as absent.
  const fields = mapper.columns.map((at) => stringField(vehicle, API_HEADER[at] ?? '') ?? '');
  const fuel = primaryFuel(objectArrayField(answer, 'fuels'));
  const outcome = mapper.map({ line: 2, fields, width: API_HEADER.length }, () => fuel);
  if (!outcome.ok) throw new UpstreamError('bad-response', `RDW row not usable: ${outcome.reason}`);
  return JSON.parse(outcome.document) as unknown;
}

/** `CheckNetherlands` from RDW Open Data, after the local store (imported RDW data wins). */
export class RdwVehicleProvider implements Provider {
  constructor(private readonly client: RdwClient) {}

  get name(): string {
    return this.client.name;
  }

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    // RDW plates are letters and digits only (§3: "upper case, no hyphens").
    const plate = query.key.replace(/[\s-]/g, '').toUpperCase();
    if (!/^[A-Z0-9]{1,8}$/.test(plate)) return { status: 'not-found' };
    const answer = await this.client.vehicle(plate);
    if (answer.status !== 'found') return unansweredAs(answer);
    try {
      return foundAs(answer, rdwVehicleJson(answer.payload, query), this.name);
    } catch (error) {
      if (error instanceof UpstreamError) return { status: 'unavailable', reason: `${this.name}: ${error.message}` };
      throw error;
    }
  }
}
