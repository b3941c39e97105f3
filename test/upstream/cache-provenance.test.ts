import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeCarsxe, CARSXE_PLATES } from '../fakes/fake-carsxe.js';
import { FakeUkvd, UKVD_PLATES } from '../fakes/fake-ukvd.js';
import { FakeVincario, VINCARIO_VINS } from '../fakes/fake-vincario.js';
import { paidProviders, queryOf, type PaidProviders } from './paid-harness.js';

/**
 * Provenance of a paid upstream's answer (issue 32, "What the operator sees"): the first answer
 * names the upstream that was asked, a repeat served by its answer cache says `cache` (the ledger's
 * source and X-Lookup-Source read ProviderAnswer.via), so the operator can tell spend from savings.
 */
describe('a paid upstream answer says whether the upstream or its cache gave it', () => {
  let ukvd: FakeUkvd;
  let vincario: FakeVincario;
  let carsxe: FakeCarsxe;
  let p: PaidProviders;

  beforeAll(async () => {
    ukvd = await FakeUkvd.start({ apiKey: 'ukvd-3f9a1c7e-5b2d-4f6a-8c0e-000000000002' });
    vincario = await FakeVincario.start({ apiKey: 'vincario-provenance', secret: 'provenance-secret' });
    carsxe = await FakeCarsxe.start({ apiKey: 'carsxe-provenance' });
    p = await paidProviders({
      UKVD_API_KEY: 'ukvd-3f9a1c7e-5b2d-4f6a-8c0e-000000000002',
      UKVD_BASE_URL: ukvd.baseUrl,
      VINCARIO_API_KEY: 'vincario-provenance',
      VINCARIO_SECRET: 'provenance-secret',
      VINCARIO_BASE_URL: vincario.baseUrl,
      CARSXE_API_KEY: 'carsxe-provenance',
      CARSXE_BASE_URL: carsxe.baseUrl,
    });
  });
  afterAll(async () => {
    await p.close();
    await Promise.all([ukvd.close(), vincario.close(), carsxe.close()]);
  });

  const cases = [
    ['ukvd', 'Check', () => queryOf('Check', { RegistrationNumber: UKVD_PLATES.car })],
    ['vincario', 'VinCheck', () => queryOf('VinCheck', { Vin: VINCARIO_VINS.focus })],
    ['carsxe', 'CheckUSA', () => queryOf('CheckUSA', { RegistrationNumber: CARSXE_PLATES.us.plate, State: CARSXE_PLATES.us.state })],
  ] as const;

  it.each(cases)('%s: the upstream first, then its cache', async (name, operation, query) => {
    const provider = p.provider(operation, name);
    const first = await provider.find(query());
    expect(first).toMatchObject({ status: 'found', source: name, via: 'upstream' });
    const again = await provider.find(query());
    expect(again).toMatchObject({ status: 'found', source: name, via: 'cache' });
    if (first.status === 'found' && again.status === 'found') expect(again.record).toEqual(first.record);
  });
});
