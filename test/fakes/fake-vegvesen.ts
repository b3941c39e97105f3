import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake Statens vegvesen single lookup (upstream-sources.md §5): `GET /enkeltoppslag/kjoretoydata
 * ?kjennemerke=` with `SVV-Authorization: Apikey <key>` (403 otherwise). Unknown plates get 204;
 * trigger plates reuse DVLA's (§9.4): ER19NFD 404, ER19THR 429, ER19ERR 500, ER19MNT 503,
 * ER19HNG never answers. Records follow the shape of the real one in §5; values are illustrative.
 */

export const VEGVESEN_PATH = '/enkeltoppslag/kjoretoydata';

const kode = (kodeVerdi: string, kodeNavn?: string): Record<string, unknown> => ({ kodeVerdi, ...(kodeNavn !== undefined ? { kodeNavn } : {}), tidligereKodeVerdi: [] });

/** The electric Golf of §5's example record, in the older `motorOgDrivverk` layout. */
function electricGolf(): Record<string, unknown> {
  return {
    kjoretoyId: { kjennemerke: 'EK 39085', understellsnummer: 'WVWZZZAUZH8950429' },
    forstegangsregistrering: { registrertForstegangNorgeDato: '2017-06-06' },
    kjennemerke: [{ fomTidspunkt: '2017-06-06T00:00:00+02:00', kjennemerke: 'EK 39085', kjennemerkekategori: 'KJORETOY', kjennemerketype: kode('NORMALE') }],
    registrering: { registreringsstatus: kode('REGISTRERT'), fomTidspunkt: '2017-06-06T00:00:00+02:00' },
    godkjenning: {
      tekniskGodkjenning: {
        kjoretoyklassifisering: { beskrivelse: 'Personbil', tekniskKode: kode('M1') },
        tekniskeData: {
          generelt: { merke: [{ merke: 'VOLKSWAGEN', merkeKode: '5750' }], handelsbetegnelse: ['E-GOLF'], fabrikant: [{ fabrikantNavn: 'VOLKSWAGEN AG' }] },
          karosseriOgLasteplan: { antallDorer: [5], karosseritype: kode('AC', 'Stasjonsvogn'), rFarge: [{ kodeNavn: 'Grå', kodeVerdi: '05' }] },
          motorOgDrivverk: { maksimumHastighet: [150], motor: [{ arbeidsprinsipp: kode('ELEKTRISK'), drivstoff: [{ drivstoffKode: kode('5', 'Elektrisk') }] }] },
          persontall: { sitteplasserTotalt: 5, sitteplasserForan: 2 },
          vekter: { egenvekt: 1540, tillattTotalvekt: 2020 },
        },
      },
    },
    periodiskKjoretoyKontroll: { kontrollfrist: '2023-05-31', sistGodkjent: '2021-05-20' },
  };
}

/** A diesel in the newer `motorOgYtelse` layout (§5: "resolve both paths"). */
function dieselOctavia(): Record<string, unknown> {
  return {
    kjoretoyId: { kjennemerke: 'DN 12345', understellsnummer: 'TMBJJ7NE0K0123456' },
    forstegangsregistrering: { registrertForstegangNorgeDato: '2019-02-11' },
    godkjenning: {
      tekniskGodkjenning: {
        tekniskeData: {
          generelt: { merke: [{ merke: 'SKODA', merkeKode: '5030' }], handelsbetegnelse: ['OCTAVIA'] },
          karosseriOgLasteplan: { rFarge: [{ kodeNavn: 'Svart', kodeVerdi: '02' }] },
          motorOgYtelse: { motor: [{ slagvolum: 1968, drivstoff: [{ drivstoffKode: kode('2', 'Diesel'), maksNettoEffekt: 110 }] }] },
          persontall: { sitteplasserTotalt: 5 },
        },
      },
    },
  };
}

export function vegvesenVehicles(): Record<string, Record<string, unknown>> {
  return { EK39085: electricGolf(), DN12345: dieselOctavia(), NOMAKE1: { kjoretoyId: { kjennemerke: 'NOMAKE1' } } };
}

export class FakeVegvesen {
  private constructor(
    readonly server: FakeHttpServer,
    readonly apiKey: string,
  ) {}

  static async start(apiKey: string): Promise<FakeVegvesen> {
    const holder: { fake?: FakeVegvesen } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeVegvesen(server, apiKey);
    return holder.fake;
  }

  /** VEGVESEN_BASE_URL for the service. */
  get baseUrl(): string {
    return this.server.url;
  }

  get calls(): number {
    return this.server.count(VEGVESEN_PATH);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    if (req.method !== 'GET' || req.path !== VEGVESEN_PATH) return { status: 404, json: { feilmelding: 'Ukjent ressurs' } };
    if (req.headers['svv-authorization'] !== `Apikey ${this.apiKey}`) return { status: 403, json: { feilmelding: 'Ugyldig API-nøkkel' } };
    const plate = new URL(req.url, 'http://fake').searchParams.get('kjennemerke') ?? '';
    switch (plate) {
      case 'ER19NFD':
        return { status: 404, json: { feilmelding: 'Fant ikke kjøretøy' } };
      case 'ER19THR':
        return { status: 429, json: { feilmelding: 'For mange forespørsler' } };
      case 'ER19ERR':
        return { status: 500, json: { feilmelding: 'Intern feil' } };
      case 'ER19MNT':
        return { status: 503, text: 'Service Unavailable' };
      case 'ER19HNG':
        return { hang: true };
      case 'ER19JNK':
        return { status: 200, text: '<html>vedlikehold</html>' };
      case 'ER19EMP':
        return { status: 200, json: { kjoretoydataListe: [] } };
    }
    const vehicle = vegvesenVehicles()[plate];
    return vehicle ? { status: 200, json: { kjoretoydataListe: [vehicle] } } : { status: 204 };
  }
}
