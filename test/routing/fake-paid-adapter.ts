import { readUpstreamSettings } from '../../src/config/upstream-settings.js';
import { readPaidUpstream, type PaidUpstreamSettings } from '../../src/config/paid-upstream-config.js';
import { EnvReader } from '../../src/config/env-reader.js';
import type { LookupQuery } from '../../src/lookup/lookup-query.js';
import type { Provider, ProviderAnswer } from '../../src/lookup/provider.js';
import type { ProviderRegistration } from '../../src/providers/provider-chains.js';
import { UpstreamError } from '../../src/providers/upstream/upstream-error.js';
import { foundAs, unansweredAs, UpstreamSource, type FetchOutcome, type UpstreamContext } from '../../src/providers/upstream/upstream-source.js';

/** The operation the fake paid APIs answer in these tests. */
export const ROUTED_OPERATION = 'CheckFrance';

/**
 * An adapter for FakePaidApi, registered only by the routing tests, written as a real paid
 * adapter is: it says how to ask and classifies each answer once (found with its price and
 * balance, not found, out of funds, quota, refused key, unavailable); the router does the rest.
 * Its settings come from the same reader every paid upstream's do (readPaidUpstream), under its
 * own prefix: `<PREFIX>_PRICE`, `_OPERATIONS`, `_MONTHLY_BUDGET`, `_CACHE_TTL_S`.
 */
export class FakePaidProvider implements Provider {
  constructor(
    private readonly source: UpstreamSource,
    private readonly key: string,
  ) {}

  get name(): string {
    return this.source.name;
  }

  async find(query: LookupQuery): Promise<ProviderAnswer> {
    const plate = query.values.RegistrationNumber ?? '';
    const answer = await this.source.lookup(plate, () => this.fetch(plate), { operation: query.operation.name });
    if (answer.status !== 'found') return unansweredAs(answer);
    return foundAs(answer, (answer.payload as { vehicle: unknown }).vehicle, this.name);
  }

  private async fetch(plate: string): Promise<FetchOutcome> {
    const url = `${this.source.settings.baseUrl}/v1/lookup?${new URLSearchParams({ plate, key: this.key }).toString()}`;
    // Once per lookup: a paid call is never repeated by the client (the router is the only retry loop).
    const response = await this.source.http.request({ method: 'GET', url, idempotent: false, readRateLimits: true });
    const json = (): Record<string, unknown> => {
      try {
        return JSON.parse(response.text) as Record<string, unknown>;
      } catch {
        throw new UpstreamError('bad-response', `HTTP ${response.status} that is not JSON`, response.status);
      }
    };
    switch (response.status) {
      case 200: {
        const body = json();
        if (body.success !== true) throw new UpstreamError('bad-response', 'HTTP 200 without success', 200);
        return {
          status: 'found',
          payload: { vehicle: body.vehicle },
          ...(typeof body.price === 'number' ? { cost: body.price } : {}),
          ...(typeof body.balance === 'number' ? { balance: body.balance } : {}),
        };
      }
      case 404:
        return { status: 'not-found' };
      case 401:
      case 403:
        throw new UpstreamError('auth', `the key was refused (HTTP ${response.status})`, response.status);
      case 402:
        throw new UpstreamError('out-of-funds', 'insufficient funds (HTTP 402)', 402);
      case 429:
        throw new UpstreamError(json().usage === undefined ? 'rate-limited' : 'quota', 'quota used up (HTTP 429)', 429);
      default:
        throw new UpstreamError('unexpected-status', `HTTP ${response.status}`, response.status);
    }
  }
}

/** The settings of a fake paid upstream `name` from an environment, through the generic reader. */
export function fakePaidSettings(name: string, env: Record<string, string>): PaidUpstreamSettings {
  const reader = new EnvReader(env);
  const prefix = name.toUpperCase();
  return readPaidUpstream(reader, prefix, readUpstreamSettings(reader, prefix, name, { baseUrl: env[`${prefix}_BASE_URL`] ?? 'http://127.0.0.1:9', timeoutMs: 2000, budgetMs: 2000 }), [ROUTED_OPERATION]);
}

/** The one registration line a paid provider needs (provider-chains.ts), for each fake. */
export function fakePaidRegistrations(fakes: ReadonlyArray<{ readonly name: string; readonly key: string; readonly env: Record<string, string> }>): (context: UpstreamContext) => ProviderRegistration[] {
  return (context) =>
    fakes.map(({ name, key, env }) => {
      const settings = fakePaidSettings(name, env);
      return { operations: settings.operations, paid: { provider: new FakePaidProvider(new UpstreamSource(settings.settings, context, [key]), key), settings } };
    });
}
