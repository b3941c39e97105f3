/**
 * Issue 17 items 8 and 9: the Host header and the request target as a hostile or unusual client
 * sends them. An invalid Host (`999.1.1.1`, `a:99999`, `127.-1.0.1`) crashed the operation help
 * page (500 and a stack trace per request) and reached WSDL addresses and ImageUrl; it is now
 * refused with a 400 in each interface's own form. An absolute-form target
 * (`GET http://host/path`, which RFC 9112 section 3.2.2 requires servers to accept) was read as
 * if the scheme and authority were part of the path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { exchange, type WireResponse } from './raw-http.js';

let t: TestApp;
let port: number;
let key: string;
const USER = 'target';
const CREDITS = 100;

beforeAll(async () => {
  t = await createTestApp();
  await t.importRecords(sampleLines());
  key = await t.account(USER, CREDITS);
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
});
afterAll(async () => {
  await t.close();
});

async function get(target: string, headers: Record<string, string> = {}): Promise<WireResponse> {
  const lines = Object.entries({ host: '127.0.0.1', connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
  const { responses } = await exchange(port, `GET ${target} HTTP/1.1\r\n${lines.join('')}\r\n`);
  const [first] = responses;
  if (!first) throw new Error(`no response to GET ${target}`);
  return first;
}

async function balance(): Promise<number> {
  return (await t.services.accounts.show(USER)).credits;
}

const INVALID_HOSTS = ['999.1.1.1', 'a:99999', '127.-1.0.1', '1.2.3.256:80', 'exa mple.com', 'a/b', 'x@y'];

describe('an invalid Host header', () => {
  it.each(INVALID_HOSTS)('%s gets a plain 400 on the help pages, not a 500', async (host) => {
    for (const target of ['/api/reg.asmx', '/api/reg.asmx?op=CheckUSA', '/api/reg.asmx?WSDL', '/api/bespokeapi.asmx?disco']) {
      const res = await get(target, { host });
      expect(res.statusCode, target).toBe(400);
      expect(res.headers['content-type'], target).toBe('text/plain; charset=utf-8');
      expect(res.body, target).toMatch(/Host header/);
    }
  });

  it.each(INVALID_HOSTS)('%s is refused on every lookup binding before any lookup, in its own form, and costs nothing', async (host) => {
    const before = await balance();
    const httpGet = await get(`/api/reg.asmx/CheckUSA?RegistrationNumber=7KDJ294&State=CA&username=${USER}`, { host });
    expect(httpGet.statusCode).toBe(400);
    expect(httpGet.body).toMatch(/Host header.*\r\n$/);

    const json = await get('/api/json.aspx/CheckFrance/FK482TR', { host, authorization: t.basic(USER, key) });
    expect(json.statusCode).toBe(400);
    expect(json.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(json.body).toMatch(/Host header/);

    const envelope = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>FK482TR</RegistrationNumber><username>${USER}</username></CheckFrance></soap:Body></soap:Envelope>`;
    const { responses } = await exchange(
      port,
      `POST /api/reg.asmx HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\ncontent-type: text/xml; charset=utf-8\r\nsoapaction: "http://regcheck.org.uk/CheckFrance"\r\ncontent-length: ${Buffer.byteLength(envelope)}\r\n\r\n${envelope}`,
    );
    expect(responses[0]?.statusCode).toBe(400);
    expect(responses[0]?.body).toContain('<faultcode>soap:Client</faultcode>');
    expect(await balance()).toBe(before);
  });

  it('leaves valid hosts alone: names, IPv4, IPv6 and ports reach the WSDL address unchanged', async () => {
    for (const host of ['localhost', 'LocalHost:8080', 'api.example.co.uk', '10.0.0.1:443', '[::1]:8080', 'my-host']) {
      const res = await get('/api/reg.asmx?WSDL', { host });
      expect(res.statusCode, host).toBe(200);
      expect(res.body, host).toContain(`location="http://${host}/api/reg.asmx"`);
    }
  });

  it('still serves an HTTP/1.0 request without a Host header', async () => {
    const { responses } = await exchange(port, 'GET /api/reg.asmx?WSDL HTTP/1.0\r\n\r\n');
    expect(responses[0]?.statusCode).toBe(200);
    expect(responses[0]?.body).toContain('location="http://localhost/api/reg.asmx"');
  });
});

describe('an absolute-form request target', () => {
  it('is routed on its path on the JSON interface, and the answer is charged once', async () => {
    const before = await balance();
    const res = await get(`http://127.0.0.1:${port}/api/json.aspx/CheckFrance/FK482TR`, { authorization: t.basic(USER, key) });
    expect(res.statusCode).toBe(200);
    expect((JSON.parse(res.body) as { Description: string }).Description).toBe('RENAULT CLIO V');
    expect(await balance()).toBe(before - 1);
  });

  it('reads the query of the HTTP GET binding', async () => {
    const res = await get(`http://127.0.0.1/api/reg.asmx/CheckUSA?RegistrationNumber=7KDJ294&State=CA&username=${USER}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<Vehicle ');
  });

  it('reads ?WSDL, ?disco and ?op= on the service pages, and takes the host from the target (RFC 9112 section 3.2.2)', async () => {
    const wsdl = await get('http://proxy.example:81/api/reg.asmx?WSDL', { host: 'ignored.example' });
    expect(wsdl.statusCode).toBe(200);
    expect(wsdl.body).toContain('location="http://proxy.example:81/api/reg.asmx"');
    const disco = await get('http://proxy.example/api/reg.asmx?disco');
    expect(disco.body).toContain('<discovery');
    const op = await get('HTTP://proxy.example/api/reg.asmx?op=CheckUSA');
    expect(op.statusCode).toBe(200);
    expect(op.body).toContain('CheckUSA');
    expect(op.body).toContain('Host: proxy.example');
  });

  it('answers malformed percent-encoding on the JSON interface in its form (500 plain text)', async () => {
    const res = await get('http://127.0.0.1/api/json.aspx/CheckFrance/%E0%A4%A', { authorization: t.basic(USER, key) });
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe('The request path has malformed percent-encoding');
  });

  it('refuses an invalid authority in the target like an invalid Host', async () => {
    const res = await get('http://999.1.1.1/api/reg.asmx?op=CheckUSA');
    expect(res.statusCode).toBe(400);
  });
});
