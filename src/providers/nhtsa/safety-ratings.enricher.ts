import type { LookupQuery } from '../../lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../lookup/provider.js';
import { asObject, numberField, stringField, type JsonObject } from '../upstream/json-reader.js';
import type { NhtsaRatingsClient } from './nhtsa-ratings.client.js';

/** The vehicleJson member the ratings go under (docs/providers.md). */
export const RATINGS_KEY = 'NhtsaSafetyRatings';

/** The operations whose answers get US ratings: US vehicles with make, model and year. */
export const RATED_OPERATIONS = ['VinCheck', 'CheckUSA'] as const;

/** The rating fields passed on, as NHTSA names them (`"1"`-`"5"` or `"Not Rated"`). */
const STAR_FIELDS = [
  'OverallRating', 'OverallFrontCrashRating', 'FrontCrashDriversideRating', 'FrontCrashPassengersideRating', 'OverallSideCrashRating',
  'SideCrashDriversideRating', 'SideCrashPassengersideRating', 'SidePoleCrashRating', 'RolloverRating',
] as const;
const TEXT_FIELDS = ['NHTSAElectronicStabilityControl', 'NHTSAForwardCollisionWarning', 'NHTSALaneDepartureWarning'] as const;

/** `{CurrentTextValue: x}` or a plain string, as vehicleJson members come. */
function textOf(value: unknown): string | undefined {
  const inner = asObject(value);
  const text = inner ? inner.CurrentTextValue : value;
  return typeof text === 'string' && text.trim() !== '' ? text.trim() : undefined;
}

/** One variant's ratings, in the member's shape. */
function variant(rating: JsonObject): Record<string, unknown> {
  const out: Record<string, unknown> = { VehicleId: numberField(rating, 'VehicleId'), VehicleDescription: stringField(rating, 'VehicleDescription') };
  for (const name of [...STAR_FIELDS, ...TEXT_FIELDS]) {
    const value = stringField(rating, name);
    if (value !== undefined) out[name] = value;
  }
  const rollover = numberField(rating, 'RolloverPossibility');
  if (rollover !== undefined) out.RolloverPossibility = rollover;
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

/**
 * Wraps a provider of a rated operation: a found vehicle whose record has make, model and year
 * gets NHTSA's 5-Star Safety Ratings under RATINGS_KEY (US-market ratings, never Euro NCAP's). The
 * ratings are extra: when NHTSA has none, or cannot answer, the vehicle is served without them
 * (and, for the second, not kept in the pipeline's record cache, so a later lookup asks again).
 */
export class SafetyRatingsProvider implements Provider {
  constructor(
    private readonly inner: Provider,
    private readonly client: NhtsaRatingsClient,
  ) {}

  get name(): string {
    return this.inner.name;
  }

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const answer = await this.inner.find(query);
    if (answer.status !== 'found') return answer;
    const record = asObject(answer.record);
    const make = textOf(record?.CarMake);
    const model = textOf(record?.CarModel);
    const year = Number(textOf(record?.RegistrationYear) ?? String(numberField(record ?? {}, 'RegistrationYear') ?? ''));
    if (!record || make === undefined || model === undefined || !Number.isInteger(year) || year < 1900) return answer;
    const ratings = await this.client.ratings({ make, model, modelYear: year });
    if (ratings.status === 'unavailable') return { status: 'found', record: answer.record, source: answer.source };
    if (ratings.status === 'not-found') return answer;
    const variants = Array.isArray(ratings.payload) ? (ratings.payload as unknown[]).map(asObject).filter((r): r is JsonObject => r !== undefined) : [];
    const enriched = { ...record, [RATINGS_KEY]: { Source: 'NHTSA 5-Star Safety Ratings (US market)', ModelYear: year, Variants: variants.map(variant) } };
    // The ratings have their own TTL cache; the combined record must not outlive it in the pipeline's.
    return { status: 'found', record: enriched, source: answer.source };
  }
}
