/**
 * Issue 17 item 2: a valid lookup followed on the same connection by bytes the HTTP parser
 * rejects was dispatched and debited, and then the client-error handler wrote a raw 400 over the
 * connection and closed it, so the paid answer never left. A client error must let the response
 * in flight finish (then close), never cut it off. Each reproduction of the issue is sent on a raw
 * socket, as `printf ... | nc -q1` did: every debit must match an answer the client received whole.
 * On SQLite and on PostgreSQL with Redis (issue 31: there the debit waits on the network, and the
 * half-closed connection was ended before the answer): a debit given back (its answer not
 * delivered, a `reversal` row) counts as no debit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { exchange, type WireResponse } from './raw-http.js';
import { until } from '../helpers/until.js';

let t: TestApp;
let port: number;
let key: string;
const USER = 'pipeline';

const LOOKUPS = {
  'the HTTP GET binding': () => `GET /api/reg.asmx/CheckUSA?RegistrationNumber=7KDJ294&State=CA&username=${USER} HTTP/1.1\r\nHost: x\r\n`,
  'the JSON interface': () => `GET /api/json.aspx/CheckFrance/FK482TR HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.basic(USER, key)}\r\n`,
} as const;

/** The three reproductions: what follows the request's header lines. */
const TRAILERS = {
  'pipelined garbage': '\r\nGARBAGE \x01\x02 NOT HTTP\r\n\r\n',
  'a malformed chunk': 'Transfer-Encoding: chunked\r\n\r\nzz\r\n',
  'an invalid Transfer-Encoding': 'Transfer-Encoding: foo\r\n\r\n',
  'a stray byte after the request': '\r\nx',
} as const;

/** Request ids of the debits that stand: a debit given back (a `reversal` row of its request id) does not. */
async function debitIds(): Promise<string[]> {
  const rows = await t.services.accounts.usage(USER);
  const reversed = new Set(rows.filter((row) => row.kind === 'reversal').map((row) => row.requestId));
  return rows.filter((row) => row.kind === 'debit' && !reversed.has(row.requestId)).map((row) => row.requestId ?? '');
}

/**
 * The paid answer whole, then the 400 or only the close. Which of the two depends on timing: once
 * the client has ended its side, Node ends the connection after the last answer owed
 * (httpAllowHalfOpen, src/app.ts); when that answer is written after the client's FIN arrived (a
 * debit committed over the network), the 400 has no connection left to go on. Either way the
 * client has its answer and knows nothing more will be read.
 */
function expectAnswerThen400OrClose(responses: readonly WireResponse[], closedByServer: boolean): void {
  expect(responses[0]?.statusCode).toBe(200);
  expect(responses[0]?.complete).toBe(true);
  expect(responses.slice(1).map((r) => r.statusCode)).toEqual(responses.length > 1 ? [400] : []);
  expect(closedByServer).toBe(true);
}

function delivered(responses: readonly WireResponse[]): string[] {
  return responses.filter((r) => r.complete && r.statusCode === 200).map((r) => r.headers['x-request-id'] ?? '');
}

describe.each(await enginesToTest())('client errors on %s', (engine) => {
  beforeAll(async () => {
    t = await createTestApp(await engineEnv(engine), undefined, engine);
    await t.importRecords(sampleLines());
    key = await t.account(USER, 1000);
    port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  afterAll(async () => {
    await t.close();
  });

  describe.each(Object.keys(LOOKUPS) as Array<keyof typeof LOOKUPS>)('a lookup on %s followed by bytes the parser rejects', (binding) => {
    it.each(Object.keys(TRAILERS) as Array<keyof typeof TRAILERS>)('(%s) delivers the paid answer whole before closing', async (trailer) => {
      const before = await debitIds();
      const { responses, closedByServer } = await exchange(port, `${LOOKUPS[binding]()}${TRAILERS[trailer]}`, { halfClose: true });
      const debits = (await debitIds()).filter((id) => !before.includes(id));
      const [first] = responses;
      expect(first?.statusCode).toBe(200);
      expect(first?.complete).toBe(true);
      // Every debit has its answer on the wire: the ids match one to one.
      expect(debits).toEqual(delivered(responses));
      expect(debits).toHaveLength(1);
      expect(closedByServer).toBe(true);
    });

    it('(garbage, client keeps the connection open) delivers the answer and then closes the connection', async () => {
      const before = await debitIds();
      const { responses, closedByServer } = await exchange(port, `${LOOKUPS[binding]()}${TRAILERS['pipelined garbage']}`, { timeoutMs: 3000 });
      const debits = (await debitIds()).filter((id) => !before.includes(id));
      expect(debits).toEqual(delivered(responses));
      expect(debits).toHaveLength(1);
      expect(closedByServer).toBe(true);
    });
  });

  describe('a request with a body, read whole, with garbage in the same packet', () => {
    const soap = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>FK482TR</RegistrationNumber><username>${USER}</username></CheckFrance></soap:Body></soap:Envelope>`;
    const form = `RegistrationNumber=FK482TR&username=${USER}`;
    it.each([
      ['SOAP 1.1', `POST /api/reg.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "http://regcheck.org.uk/CheckFrance"\r\nContent-Length: ${soap.length}\r\n\r\n${soap}`],
      ['HTTP POST', `POST /api/reg.asmx/CheckFrance HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`],
    ])('(%s) is answered before the 400: its handler runs after the parser has already failed', async (_binding, bytes) => {
      const before = await debitIds();
      const { responses, closedByServer } = await exchange(port, `${bytes}GET / HTTP/9.9\r\n\r\n`, { halfClose: true });
      const debits = (await debitIds()).filter((id) => !before.includes(id));
      expectAnswerThen400OrClose(responses, closedByServer);
      expect(debits).toEqual(delivered(responses));
      expect(debits).toHaveLength(1);
    });

    it.each([
      ['SOAP 1.1', `POST /api/reg.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "http://regcheck.org.uk/CheckFrance"\r\nContent-Length: ${soap.length}\r\n\r\n${soap}`],
      ['HTTP POST', `POST /api/reg.asmx/CheckFrance HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`],
    ])('(%s) followed by one stray byte past its Content-Length, half-closed, is answered and charged once, then 400', async (_binding, bytes) => {
      const before = await debitIds();
      const { responses, closedByServer } = await exchange(port, `${bytes}x`, { halfClose: true });
      const debits = (await debitIds()).filter((id) => !before.includes(id));
      expectAnswerThen400OrClose(responses, closedByServer);
      expect(debits).toEqual(delivered(responses));
      expect(debits).toHaveLength(1);
    });
  });

  describe('an HTTP/1.1 request without Host', () => {
    it('is answered 400 and the lookup pipelined behind it is answered too, not charged and cut off', async () => {
      const before = await debitIds();
      const { responses } = await exchange(port, `GET /healthz HTTP/1.1\r\nX-No-Host: 1\r\n\r\n${LOOKUPS['the JSON interface']()}Connection: close\r\n\r\n`, { halfClose: true });
      const debits = (await debitIds()).filter((id) => !before.includes(id));
      expect(responses.map((r) => r.statusCode)).toEqual([400, 200]);
      expect(responses[0]?.body).toMatch(/Host header/);
      expect(debits).toEqual(delivered(responses));
      expect(debits).toHaveLength(1);
    });
  });

  describe('a client that goes away after the rejected bytes', () => {
    it('leaves no connection behind in the server once its answer is done', async () => {
      const { connect } = await import('node:net');
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.once('connect', () => { resolve(); }));
      socket.write(`${LOOKUPS['the HTTP GET binding']()}${TRAILERS['pipelined garbage']}`);
      socket.resetAndDestroy();
      const connections = (): Promise<number> => new Promise((resolve) => t.app.server.getConnections((_e, n) => { resolve(n); }));
      await until(async () => (await connections()) === 0, 50);
      expect(await connections()).toBe(0);
    });
  });

  describe('a client error', () => {
    it('with nothing in flight is still answered 400 in plain text, and the connection closed', async () => {
      const { responses, closedByServer } = await exchange(port, 'GARBAGE\r\n\r\n');
      expect(responses[0]?.statusCode).toBe(400);
      expect(responses[0]?.body).toBe('Bad Request\r\n');
      expect(closedByServer).toBe(true);
    });

    it('that follows pipelined requests is answered 400 after their answers, in order', async () => {
      const before = await debitIds();
      const socketBytes = `${LOOKUPS['the JSON interface']()}\r\n`;
      const { responses } = await exchange(port, socketBytes + 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n' + 'BAD\r\n\r\n', { timeoutMs: 3000 });
      const debits = (await debitIds()).filter((id) => !before.includes(id));
      expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 400]);
      expect(responses.every((r) => r.complete)).toBe(true);
      expect(debits).toEqual([responses[0]?.headers['x-request-id']]);
    });
  });
});
