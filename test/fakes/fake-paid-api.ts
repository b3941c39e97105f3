import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * What the fake answers for a plate: the outcome classes every paid provider has
 * (commercial-upstreams.md §5), in the common JSON shape of CarsXE-like APIs.
 */
export type PaidOutcome = 'found' | 'not-found' | 'server-error' | 'html' | 'slow' | 'out-of-funds' | 'quota' | 'bad-key';

export interface FakePaidApiOptions {
  /** The API key it accepts (`?key=`); any other is a 401. */
  readonly key: string;
  /** Its own price per found answer, sent in the body as `price` when `sendsPrice` (UKVD's TransactionCost, Vincario's price). */
  readonly price: number;
  readonly sendsPrice?: boolean;
  /** Balance before the first call, sent back as `balance` after each found answer when `sendsPrice`; 402 once it is below the price. */
  readonly balance?: number;
  /** The make it answers with (tells the sources apart in a test). */
  readonly make: string;
}

/**
 * A faithful small paid vehicle API (a test fake): `GET /v1/lookup?plate=&key=` answers 200
 * `{success:true, vehicle:{...}, price?, balance?}`, 404 `{success:false, message:"Not found"}`
 * for an unknown plate, 401 for a wrong key, 402 `{success:false, message:"Insufficient funds"}`
 * when the balance does not cover the price, 429 `{success:false, message:"Quota exceeded",
 * usage:{...}}` when the test says the quota is used, 503 on a server error, an HTML page with 200,
 * or no answer in time (`slow`: the found answer, held until the test calls `releaseSlow()`). Each plate's outcome is scripted with `answer(plate, outcome)`; plates not
 * scripted are found. Found answers are charged from the balance, as the real ones are.
 */
export class FakePaidApi {
  private readonly outcomes = new Map<string, PaidOutcome>();
  /** Outcome of every plate, when set (a provider-wide state: out of funds, bad key...). */
  private all: PaidOutcome | undefined;
  private balance: number;
  /** Found answers held until the test releases them (single flight). */
  private hold: Promise<void> | undefined;
  /** `slow` answers wait for this; `releaseSlow()` resolves it (and starts a new one). */
  private slowGate = FakePaidApi.gate();

  private constructor(
    readonly server: FakeHttpServer,
    private readonly options: FakePaidApiOptions,
    box: { api?: FakePaidApi },
  ) {
    this.balance = options.balance ?? 1_000_000;
    box.api = this;
  }

  static async start(options: FakePaidApiOptions): Promise<FakePaidApi> {
    const box: { api?: FakePaidApi } = {};
    const server = await FakeHttpServer.start((request) => (box.api as FakePaidApi).handle(request));
    return new FakePaidApi(server, options, box);
  }

  get baseUrl(): string {
    return this.server.url;
  }

  /** Lookups asked of it (every request to /v1/lookup). */
  get calls(): number {
    return this.server.requests.filter((r) => r.path === '/v1/lookup').length;
  }

  answer(plate: string, outcome: PaidOutcome): void {
    this.outcomes.set(plate, outcome);
  }

  /** Every plate answers `outcome` (undefined: back to per-plate answers). */
  answerAll(outcome: PaidOutcome | undefined): void {
    this.all = outcome;
  }

  /** The operator tops the account up. */
  topUp(amount: number): void {
    this.balance += amount;
  }

  /** Holds found answers until the returned function is called. */
  holdAnswers(): () => void {
    let release: () => void = () => undefined;
    this.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    return () => {
      this.hold = undefined;
      release();
    };
  }

  /**
   * Sends the answers held as `slow`: long after the client gave up, as a provider that answers
   * late does (a test releases them once its lookup is over, never racing the client's timeout).
   */
  releaseSlow(): void {
    this.slowGate.release();
    this.slowGate = FakePaidApi.gate();
  }

  async close(): Promise<void> {
    this.slowGate.release();
    await this.server.close();
  }

  private static gate(): { readonly opened: Promise<void>; readonly release: () => void } {
    let release: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => {
      release = resolve;
    });
    return { opened, release };
  }

  private handle(request: FakeRequest): FakeResponse {
    if (request.path !== '/v1/lookup') return { status: 404, json: { success: false, message: 'No such endpoint' } };
    const query = new URL(request.url, 'http://fake').searchParams;
    if (query.get('key') !== this.options.key || this.all === 'bad-key') return { status: 401, json: { success: false, message: 'Invalid API key' } };
    const plate = query.get('plate') ?? '';
    const outcome = this.all ?? this.outcomes.get(plate) ?? 'found';
    switch (outcome) {
      case 'not-found':
        return { status: 404, json: { success: false, message: 'Not found' } };
      case 'server-error':
        return { status: 503, text: 'Service Unavailable' };
      case 'html':
        return { status: 200, text: '<!DOCTYPE html><html><body>Maintenance</body></html>', headers: { 'content-type': 'text/html' } };
      case 'slow':
        return { until: this.slowGate.opened.then(() => this.found(plate)) };
      case 'quota':
        return { status: 429, json: { success: false, message: 'Quota exceeded', usage: { used: 1000, limit: 1000 } } };
      case 'bad-key':
        return { status: 401, json: { success: false, message: 'Invalid API key' } };
      case 'out-of-funds':
        return { status: 402, json: { success: false, message: 'Insufficient funds' } };
      case 'found':
        break;
    }
    const found = this.found(plate);
    const hold = this.hold;
    return hold ? { until: hold.then(() => found) } : found;
  }

  /** A found answer, charged from the balance (402 when it does not cover the price). */
  private found(plate: string): FakeResponse {
    if (this.balance < this.options.price) return { status: 402, json: { success: false, message: 'Insufficient funds' } };
    this.balance = Math.round((this.balance - this.options.price) * 1e6) / 1e6;
    const body = {
      success: true,
      vehicle: { Description: `${this.options.make} ${plate}`, CarMake: { CurrentTextValue: this.options.make }, CarModel: { CurrentTextValue: 'TEST' } },
      ...(this.options.sendsPrice === true ? { price: this.options.price, balance: this.balance } : {}),
    };
    return { status: 200, json: body };
  }
}
