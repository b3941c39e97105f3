/**
 * Hostile input on the XML bindings (issue: "Untrusted XML" and "Hostile input tests"). Every
 * hostile request below is built from a lookup that would succeed and debit a credit, so a refusal
 * that did not happen shows up as a success or a debit, not as a silently passing test.
 * Expected shapes: compat-notes "Errors" (malformed XML or any DOCTYPE -> Client/Sender fault,
 * HTTP 400; faults always carry a SOAP content type; no stack traces, no type names).
 */
import { existsSync, readFileSync } from 'node:fs';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_XML_LIMITS, readXml } from '../../src/xml/xml-reader.js';
import { sampleLines } from '../helpers/sample-data.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import {
  BESPOKE_NS,
  ENVELOPE_NS,
  LEAK,
  REG_NS,
  SOAP_CONTENT_TYPE,
  USER,
  VERSIONS,
  XML_DECLARATION,
  abortedUpload,
  checkFrance,
  creditsSpent,
  envelope,
  expectCheckFranceResult,
  expectClientFault,
  expectPlainTextError,
  expectPrototypesUnpolluted,
  httpGet,
  postSoap,
  prototypeSnapshot,
  rawExchange,
  rawRequest,
  readFault,
  soapHeaders,
  withoutDebit,
  type Version,
} from './soap-fixtures.js';

const SMALL_LIMIT = 4096;
const DEFAULT_LIMIT = 1024 * 1024;
const CREDITS = 1000;

/** Default configuration (XML_BODY_LIMIT unset: 1 MiB). */
describe.each(await enginesToTest())('hostile XML on %s', (engine) => {
  let main: TestApp;
  /** XML_BODY_LIMIT=4096, so limits can be crossed with small bodies. */
  let small: TestApp;
  let mainPort: number;
  let smallPort: number;
  const cleanPrototypes = prototypeSnapshot();

  async function prepare(app: TestApp): Promise<number> {
    await app.importRecords(sampleLines());
    await app.account(USER, CREDITS);
    const address = await app.app.listen({ port: 0, host: '127.0.0.1' });
    return Number(new URL(address).port);
  }

  beforeAll(async () => {
    main = await createTestApp({}, undefined, engine);
    small = await createTestApp({ XML_BODY_LIMIT: String(SMALL_LIMIT) }, undefined, engine);
    mainPort = await prepare(main);
    smallPort = await prepare(small);
  });
  afterAll(async () => {
    await main.close();
    await small.close();
  });

  /** A CheckFrance envelope of exactly `size` bytes, padded with whitespace before Body. */
  function envelopeOfSize(version: Version, size: number): string {
    const bare = envelope(version, checkFrance());
    const padding = size - Buffer.byteLength(bare);
    expect(padding, 'the padded request must be able to reach the size').toBeGreaterThanOrEqual(0);
    return envelope(version, checkFrance(), { beforeBody: ' '.repeat(padding) });
  }

  /** A valid CheckFrance envelope with `padding` bytes of whitespace: compresses to almost nothing. */
  function paddedEnvelopeBytes(version: Version, padding: number): Buffer {
    const head = `${XML_DECLARATION}<soap:Envelope xmlns:soap="${ENVELOPE_NS[version]}">`;
    const tail = `<soap:Body>${checkFrance()}</soap:Body></soap:Envelope>`;
    return Buffer.concat([Buffer.from(head), Buffer.alloc(padding, 0x20), Buffer.from(tail)]);
  }

  /** The first line of the host's /etc/passwd, to prove it is never echoed (falls back to a marker). */
  const PASSWD_LINE = existsSync('/etc/passwd') ? (readFileSync('/etc/passwd', 'utf8').split('\n')[0] ?? 'root:x:0:0') : 'root:x:0:0';

  function expectNoPasswd(body: string): void {
    expect(body).not.toContain(PASSWD_LINE);
    expect(body).not.toMatch(/root:[^:]*:0:0/);
  }

  describe.each(VERSIONS)('SOAP %s', (version) => {
    describe('DTDs and entities', () => {
      const XXE: ReadonlyArray<readonly [string, string, string]> = [
        ['an external general entity (file:///etc/passwd) in the internal subset', '<!DOCTYPE soap:Envelope [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', '&xxe;'],
        ['a parameter entity loading an external file', '<!DOCTYPE soap:Envelope [<!ENTITY % ext SYSTEM "file:///etc/passwd"> %ext;]>', 'FK482TR'],
        ['a parameter entity defining a general entity', '<!DOCTYPE soap:Envelope [<!ENTITY % p "<!ENTITY plate \'FK482TR\'>"> %p;]>', '&plate;'],
        ['a SYSTEM DOCTYPE naming an external DTD', '<!DOCTYPE soap:Envelope SYSTEM "file:///etc/passwd">', 'FK482TR'],
        ['a PUBLIC DOCTYPE naming a remote DTD', '<!DOCTYPE soap:Envelope PUBLIC "-//EVIL//DTD X//EN" "http://127.0.0.1:9/evil.dtd">', 'FK482TR'],
        ['an internal entity that would expand to a valid plate', '<!DOCTYPE soap:Envelope [<!ENTITY plate "FK482TR">]>', '&plate;'],
        ['a DOCTYPE with no subset at all', '<!DOCTYPE soap:Envelope>', 'FK482TR'],
      ];

      it.each(XXE)('refuses %s with a 400 fault and never reads the file', async (_name, doctype, plate) => {
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ plate }), { prolog: XML_DECLARATION + doctype })));
        expectClientFault(res, version, 400, /DTD/);
        expectNoPasswd(res.body);
      });

      it('does not follow XInclude: the element is not expanded, so the plate is missing', async () => {
        const plate = '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file:///etc/passwd" parse="text"/>';
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ plate }))));
        expectClientFault(res, version, 500, /RegistrationNumber is required/);
        expectNoPasswd(res.body);
      });

      it('refuses a billion-laughs document before expanding anything', async () => {
        const entities = ['<!ENTITY lol0 "lol">', ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`)];
        const doctype = `<!DOCTYPE soap:Envelope [${entities.join('')}]>`;
        // Awaiting the answer is the measurement: an expanding parser would need ~3 GB and not return.
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ plate: '&lol9;' }), { prolog: XML_DECLARATION + doctype })));
        expectClientFault(res, version, 400, /DTD/);
        expect(res.body).not.toContain('lollol');
      });

      it('refuses a quadratic-blowup document (one large entity referenced many times)', async () => {
        const doctype = `<!DOCTYPE soap:Envelope [<!ENTITY a "${'a'.repeat(50_000)}">]>`;
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ inner: `<note>${'&a;'.repeat(5_000)}</note>` }), { prolog: XML_DECLARATION + doctype })));
        expectClientFault(res, version, 400, /DTD/);
      });

      it.each(['&nbsp;', '&copy;', '&xxe;', '&__proto__;', '&constructor;', '&toString;'])('refuses the undefined named entity %s with a 400 fault', async (entity) => {
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ plate: `${entity}FK482TR` }))));
        expectClientFault(res, version, 400, /entity/i);
      });

      it.each(['F&#x4B;482TR', '&#70;K482TR', '&#x46;&#x4b;&#52;&#56;&#50;TR'])('decodes numeric character references in a parameter (%s finds FK482TR)', async (plate) => {
        const { result, spent } = await creditsSpent(main, () => postSoap(main, version, envelope(version, checkFrance({ plate }))));
        expectCheckFranceResult(result, version);
        expect(spent).toBe(1);
      });

      it('decodes numeric references in the username too (&#97;lice is alice)', async () => {
        const { result, spent } = await creditsSpent(main, () => postSoap(main, version, envelope(version, checkFrance({ user: '&#97;lic&#x65;' }))));
        expectCheckFranceResult(result, version);
        expect(spent).toBe(1);
      });

      it('accepts the five predefined XML entities', async () => {
        const inner = '<note a="&lt;&gt;&amp;&quot;&apos;">&lt;&gt;&amp;&quot;&apos;</note>';
        const { result, spent } = await creditsSpent(main, () => postSoap(main, version, envelope(version, checkFrance({ inner }))));
        expectCheckFranceResult(result, version);
        expect(spent).toBe(1);
      });

      it.each(['&#0;', '&#x1;', '&#xD800;', '&#xFFFE;', '&#x110000;', '&#xZZ;'])('refuses the character reference %s to a non-XML character with a 400 fault', async (ref) => {
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ plate: `FK482TR${ref}` }))));
        expectClientFault(res, version, 400, /malformed|character|entity/i);
      });
    });

    describe('body size', () => {
      it(`refuses a body one byte over XML_BODY_LIMIT (${SMALL_LIMIT}) with a 413 fault`, async () => {
        const res = await withoutDebit(small, () => postSoap(small, version, envelopeOfSize(version, SMALL_LIMIT + 1)));
        expectClientFault(res, version, 413, new RegExp(`larger than ${SMALL_LIMIT} bytes`));
      });

      it(`answers a body of exactly XML_BODY_LIMIT (${SMALL_LIMIT}) bytes normally`, async () => {
        const { result, spent } = await creditsSpent(small, () => postSoap(small, version, envelopeOfSize(version, SMALL_LIMIT)));
        expectCheckFranceResult(result, version);
        expect(spent).toBe(1);
      });

      it('defaults XML_BODY_LIMIT to 1 MiB: exactly 1 MiB is served, one byte more is a 413 fault', async () => {
        const { result, spent } = await creditsSpent(main, () => postSoap(main, version, envelopeOfSize(version, DEFAULT_LIMIT)));
        expectCheckFranceResult(result, version);
        expect(spent).toBe(1);
        const over = await withoutDebit(main, () => postSoap(main, version, envelopeOfSize(version, DEFAULT_LIMIT + 1)));
        expectClientFault(over, version, 413, /larger than 1048576 bytes/);
      });
    });

    describe('Content-Encoding', () => {
      it.each([
        ['gzip', gzipSync],
        ['x-gzip', gzipSync],
        ['deflate', deflateSync],
      ] as const)('inflates a %s-encoded request and answers it', async (encoding, compress) => {
        const payload = compress(Buffer.from(envelope(version, checkFrance())));
        const { result, spent } = await creditsSpent(small, () => postSoap(small, version, payload, { headers: { 'content-encoding': encoding } }));
        expectCheckFranceResult(result, version);
        expect(spent).toBe(1);
      });

      it('applies the limit to the inflated size: exactly the limit works, one byte more is a 413 fault', async () => {
        const atLimit = await creditsSpent(small, () =>
          postSoap(small, version, gzipSync(envelopeOfSize(version, SMALL_LIMIT)), { headers: { 'content-encoding': 'gzip' } }),
        );
        expectCheckFranceResult(atLimit.result, version);
        expect(atLimit.spent).toBe(1);
        const payload = gzipSync(envelopeOfSize(version, SMALL_LIMIT + 1));
        expect(payload.length).toBeLessThan(SMALL_LIMIT);
        const over = await withoutDebit(small, () => postSoap(small, version, payload, { headers: { 'content-encoding': 'gzip' } }));
        expectClientFault(over, version, 413, new RegExp(`inflates to more than ${SMALL_LIMIT} bytes`));
      });

      it('refuses a gzip bomb (small on the wire, 2 MiB inflated) with a 413 fault', async () => {
        const bomb = gzipSync(paddedEnvelopeBytes(version, 2 * 1024 * 1024), { level: 9 });
        expect(bomb.length, 'the bomb itself fits the limit').toBeLessThan(SMALL_LIMIT);
        const res = await withoutDebit(small, () => postSoap(small, version, bomb, { headers: { 'content-encoding': 'gzip' } }));
        expectClientFault(res, version, 413, /inflates to more than/);
      });

      it('refuses a 64 MiB gzip bomb under the default limit without inflating it all', async () => {
        const bomb = gzipSync(paddedEnvelopeBytes(version, 64 * 1024 * 1024), { level: 9 });
        expect(bomb.length).toBeLessThan(DEFAULT_LIMIT);
        const res = await withoutDebit(main, () => postSoap(main, version, bomb, { headers: { 'content-encoding': 'gzip' } }));
        expectClientFault(res, version, 413, /inflates to more than 1048576 bytes/);
      });

      it.each([
        ['a body that is not gzip at all', () => Buffer.from(envelope(version, checkFrance()))],
        ['a corrupt gzip stream', () => Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x03, 0xff, 0xff, 0xff])],
        ['a truncated gzip stream', () => gzipSync(envelope(version, checkFrance())).subarray(0, 40)],
      ])('refuses %s sent as gzip with a 400 fault', async (_name, payload) => {
        const res = await withoutDebit(small, () => postSoap(small, version, payload(), { headers: { 'content-encoding': 'gzip' } }));
        expectClientFault(res, version, 400, /not valid gzip/);
      });

      it.each(['br', 'compress', 'gzip, br', 'zstd'])('refuses the unsupported Content-Encoding "%s" with a 415 fault', async (encoding) => {
        const res = await withoutDebit(small, () => postSoap(small, version, envelope(version, checkFrance()), { headers: { 'content-encoding': encoding } }));
        expectClientFault(res, version, 415, /Content-Encoding .*not supported/);
      });
    });

    describe('depth and size of the tree', () => {
      it('refuses 10,000 levels of nesting inside Body with a 400 fault', async () => {
        const deep = `${'<x>'.repeat(10_000)}${'</x>'.repeat(10_000)}`;
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ inner: deep }))));
        expectClientFault(res, version, 400, /nested deeper than \d+ levels/);
      });

      it('still reads a request with a few levels of unknown elements (the depth limit is not zero)', async () => {
        const nested = `${'<x>'.repeat(10)}${'</x>'.repeat(10)}`;
        const { result, spent } = await creditsSpent(main, () => postSoap(main, version, envelope(version, checkFrance({ inner: nested }))));
        expectCheckFranceResult(result, version);
        expect(spent).toBe(1);
      });

      it('refuses more elements than the element limit with a 400 fault', async () => {
        const many = '<x/>'.repeat(DEFAULT_XML_LIMITS.maxElements);
        const payload = envelope(version, checkFrance({ inner: many }));
        expect(Buffer.byteLength(payload)).toBeLessThan(DEFAULT_LIMIT);
        const res = await withoutDebit(main, () => postSoap(main, version, payload));
        expectClientFault(res, version, 400, /more than \d+ elements/);
      });
    });

    describe('character encoding', () => {
      const INVALID_UTF8: ReadonlyArray<readonly [string, number[]]> = [
        ['a lone 0xFF byte', [0xff]],
        ['a truncated three-byte sequence', [0xe2, 0x82]],
        ['an overlong encoding of "/"', [0xc0, 0xaf]],
        ['an encoded UTF-16 surrogate', [0xed, 0xa0, 0x80]],
        ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
        ['a stray continuation byte', [0x80]],
      ];

      it.each(INVALID_UTF8)('refuses %s with a 400 fault', async (_name, bytes) => {
        const [before, after] = envelope(version, checkFrance({ inner: '<note>@</note>' })).split('@') as [string, string];
        const payload = Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
        const res = await withoutDebit(main, () => postSoap(main, version, payload));
        expectClientFault(res, version, 400, /not valid UTF-8/);
      });

      it('refuses a control character that is valid UTF-8 but not an XML character with a 400 fault', async () => {
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ inner: '<note>\u0001</note>' }))));
        expectClientFault(res, version, 400, /malformed XML/);
      });

      it.each(['iso-8859-1', 'windows-1252', 'utf-16', 'utf-7'])('refuses charset=%s with a 415 fault', async (charset) => {
        const media = version === '1.1' ? 'text/xml' : 'application/soap+xml';
        const res = await withoutDebit(main, () =>
          postSoap(main, version, envelope(version, checkFrance()), { headers: { 'content-type': `${media}; charset=${charset}` } }),
        );
        expectClientFault(res, version, 415, new RegExp(`charset ${charset} is not supported`));
      });
    });

    describe('prototype-polluting names', () => {
      const NAMES = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf'];

      it.each(NAMES)('ignores <%s> elements (with children and attributes) inside the operation and pollutes nothing', async (name) => {
        const inner = `<${name} ${name === '__proto__' ? '' : `${name}="yes" `}polluted="yes"><polluted>yes</polluted><prototype><polluted>yes</polluted></prototype></${name}>`;
        const { result, spent } = await creditsSpent(main, () => postSoap(main, version, envelope(version, checkFrance({ inner }))));
        expectCheckFranceResult(result, version);
        expect(spent).toBe(1);
        expectPrototypesUnpolluted(cleanPrototypes);
      });

      it('ignores __proto__ as an attribute and as a namespace prefix', async () => {
        const op = `<CheckFrance xmlns="${REG_NS}" xmlns:__proto__="http://evil" __proto__:polluted="yes" __proto__="x" constructor="y"><RegistrationNumber __proto__="x">FK482TR</RegistrationNumber><username>${USER}</username><__proto__:polluted>yes</__proto__:polluted></CheckFrance>`;
        const { result, spent } = await creditsSpent(main, () => postSoap(main, version, envelope(version, op)));
        expectCheckFranceResult(result, version);
        expect(spent).toBe(1);
        expectPrototypesUnpolluted(cleanPrototypes);
      });

      it.each(NAMES)('answers <%s> as the operation element with an unknown-element fault', async (name) => {
        const op = `<${name} xmlns="${REG_NS}"><RegistrationNumber>FK482TR</RegistrationNumber><username>${USER}</username><polluted>yes</polluted></${name}>`;
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, op), { action: null }));
        expectClientFault(res, version, 500, new RegExp(`did not recognize the request element \\{${REG_NS}\\}${name}\\.`));
        expectPrototypesUnpolluted(cleanPrototypes);
      });

      it.each(NAMES)('does not resolve the action %s to an operation', async (name) => {
        const op = `<${name} xmlns="${REG_NS}"><RegistrationNumber>FK482TR</RegistrationNumber><username>${USER}</username></${name}>`;
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, op), { action: `${REG_NS}/${name}` }));
        expectClientFault(res, version, 500, /did not recognize/);
        expectPrototypesUnpolluted(cleanPrototypes);
      });

      it.each(['__proto__', 'constructor', 'hasOwnProperty'])('treats the username %s as an unknown account', async (user) => {
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ user }))));
        expectClientFault(res, version, 500, /Your username is incorrect/);
      });
    });

    describe('namespaces are matched exactly', () => {
      it('refuses an Envelope in a made-up namespace with a 400 fault', async () => {
        const payload = `${XML_DECLARATION}<soap:Envelope xmlns:soap="http://evil.example/envelope"><soap:Body>${checkFrance()}</soap:Body></soap:Envelope>`;
        const res = await withoutDebit(main, () => postSoap(main, version, payload));
        expectClientFault(res, version, 400, /not a SOAP envelope/);
      });

      it('refuses a Body in another namespace than its Envelope with a 400 fault', async () => {
        const payload = `${XML_DECLARATION}<soap:Envelope xmlns:soap="${ENVELOPE_NS[version]}"><e:Body xmlns:e="http://evil.example/">${checkFrance()}</e:Body></soap:Envelope>`;
        const res = await withoutDebit(main, () => postSoap(main, version, payload));
        expectClientFault(res, version, 400, /no Body/);
      });

      it.each(['http://evil.example/', 'http://Regcheck.org.uk', 'http://regcheck.org.uk/', 'HTTP://REGCHECK.ORG.UK', ''])(
        'faults an operation element in the namespace "%s" when the SOAPAction names CheckFrance',
        async (ns) => {
          const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ ns }))));
          expectClientFault(res, version, 500, /was not expected/);
        },
      );

      it.each(['http://evil.example/', 'http://regcheck.org.uk/', ''])('faults an operation element in the namespace "%s" without an action', async (ns) => {
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ ns })), { action: null }));
        expectClientFault(res, version, 500, /did not recognize the request element/);
      });

      it.each(['xmlns="http://evil.example/"', 'xmlns=""', 'xmlns="http://Regcheck.org.uk/"'])(
        'does not read RegistrationNumber from another namespace (%s): it is missing',
        async (declaration) => {
          const op = `<CheckFrance xmlns="${REG_NS}"><RegistrationNumber ${declaration}>FK482TR</RegistrationNumber><username>${USER}</username></CheckFrance>`;
          const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, op)));
          expectClientFault(res, version, 500, /RegistrationNumber is required/);
        },
      );

      it('does not read username from another namespace: the caller is unknown', async () => {
        const op = `<CheckFrance xmlns="${REG_NS}"><RegistrationNumber>FK482TR</RegistrationNumber><username xmlns="http://evil.example/">${USER}</username></CheckFrance>`;
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, op)));
        expectClientFault(res, version, 500, /Your username is incorrect/);
      });

      it('faults a bespokeapi.asmx operation posted to reg.asmx, with or without its action', async () => {
        const op = `<CheckEuroNCap xmlns="${BESPOKE_NS}"><Make>Volvo</Make><username>${USER}</username></CheckEuroNCap>`;
        for (const action of [`${BESPOKE_NS}CheckEuroNCap`, null]) {
          const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, op), { action }));
          expectClientFault(res, version, 500, /did not recognize/);
        }
      });

      it('faults a reg.asmx operation posted to bespokeapi.asmx', async () => {
        for (const action of [`${REG_NS}/CheckFrance`, null]) {
          const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance()), { path: '/api/bespokeapi.asmx', action }));
          expectClientFault(res, version, 500, /did not recognize/);
        }
      });
    });

    describe('envelope structure', () => {
      it('refuses a bare operation element with no Envelope with a 400 fault', async () => {
        const payload = `${XML_DECLARATION}<CheckUSA xmlns="${REG_NS}"><RegistrationNumber>FK482TR</RegistrationNumber><State>NY</State><username>${USER}</username></CheckUSA>`;
        const res = await withoutDebit(main, () => postSoap(main, version, payload, { action: `${REG_NS}/CheckUSA` }));
        expectClientFault(res, version, 400, /not a SOAP envelope/);
      });

      it('refuses an unqualified Envelope with a 400 fault', async () => {
        const res = await withoutDebit(main, () => postSoap(main, version, `<Envelope><Body>${checkFrance()}</Body></Envelope>`));
        expectClientFault(res, version, 400, /not a SOAP envelope/);
      });

      it('refuses an Envelope without a Body with a 400 fault', async () => {
        const payload = `<soap:Envelope xmlns:soap="${ENVELOPE_NS[version]}"><soap:Header>${checkFrance()}</soap:Header></soap:Envelope>`;
        const res = await withoutDebit(main, () => postSoap(main, version, payload));
        expectClientFault(res, version, 400, /no Body/);
      });

      it.each(['', '   ', 'FK482TR', '<!-- CheckFrance -->'])('refuses a Body with no element in it ("%s") with a 400 fault', async (content) => {
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, content)));
        expectClientFault(res, version, 400, /Body is empty/);
      });

      it.each([
        ['an empty request body', ''],
        ['an unclosed element', envelope(version, checkFrance()).replace('</soap:Envelope>', '')],
        ['mismatched tags', envelope(version, checkFrance()).replace('</username>', '</user>')],
        ['a second root element', `${envelope(version, checkFrance())}<soap:Envelope xmlns:soap="${ENVELOPE_NS[version]}"/>`],
        ['text after the root element', `${envelope(version, checkFrance())}trailing`],
        ['a second XML declaration', envelope(version, checkFrance()).replace('<soap:Body>', `${XML_DECLARATION}<soap:Body>`)],
        ['not XML at all', '{"RegistrationNumber":"FK482TR","username":"alice"}'],
      ])('refuses %s with a 400 malformed-XML fault', async (_name, payload) => {
        const res = await withoutDebit(main, () => postSoap(main, version, payload));
        expectClientFault(res, version, 400, /malformed XML|no root element/);
      });
    });

    describe('processing instructions and CDATA', () => {
      it('refuses a processing instruction inside the document with a 400 fault', async () => {
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ inner: '<?evil run="yes"?>' }))));
        expectClientFault(res, version, 400, /processing instruction <\?evil\?> is not allowed/);
      });

      it('refuses an xml-stylesheet processing instruction before the root with a 400 fault', async () => {
        const prolog = `${XML_DECLARATION}<?xml-stylesheet type="text/xsl" href="file:///etc/passwd"?>`;
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance(), { prolog })));
        expectClientFault(res, version, 400, /processing instruction <\?xml-stylesheet\?> is not allowed/);
        expectNoPasswd(res.body);
      });

      it('reads a CDATA section in a parameter as its text', async () => {
        const { result, spent } = await creditsSpent(main, () =>
          postSoap(main, version, envelope(version, checkFrance({ plate: '<![CDATA[FK482TR]]>', user: `<![CDATA[${USER}]]>` }))),
        );
        expectCheckFranceResult(result, version);
        expect(spent).toBe(1);
      });

      it('does not decode references inside CDATA: <![CDATA[F&#x4B;482TR]]> is not a plate', async () => {
        const res = await withoutDebit(main, () => postSoap(main, version, envelope(version, checkFrance({ plate: '<![CDATA[F&#x4B;482TR]]>' }))));
        expectClientFault(res, version, 500, /RegistrationNumber may contain only/);
      });
    });
  });

  describe('XML reader', () => {
    it('decodes exactly the five predefined entities and numeric references', () => {
      const root = readXml('<a b="&lt;&gt;&amp;&quot;&apos;">&lt;&gt;&amp;&quot;&apos;&#65;&#x42;</a>');
      expect(root.text).toBe('<>&"\'AB');
      expect(root.attributes).toEqual([{ uri: '', local: 'b', value: '<>&"\'' }]);
    });
  });

  describe('content types', () => {
    it.each(['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'x', '*/*'])(
      'refuses a SOAP POST sent as "%s" with a 415 fault that names the content type',
      async (contentType) => {
        const res = await withoutDebit(main, () =>
          main.app.inject({ method: 'POST', url: '/api/reg.asmx', headers: { 'content-type': contentType, soapaction: `"${REG_NS}/CheckFrance"` }, payload: envelope('1.1', checkFrance()) }),
        );
        expectClientFault(res, '1.1', 415, /content type/i);
      },
    );

    it('refuses a SOAP POST without a Content-Type header with a 415 fault', async () => {
      const res = await withoutDebit(main, () =>
        main.app.inject({ method: 'POST', url: '/api/reg.asmx', headers: { soapaction: `"${REG_NS}/CheckFrance"` }, payload: envelope('1.1', checkFrance()) }),
      );
      expectClientFault(res, '1.1', 415, /content type/i);
    });

    it('does not let a JSON body pollute prototypes on either binding', async () => {
      const payload = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}';
      const soap = await withoutDebit(main, () => main.app.inject({ method: 'POST', url: '/api/reg.asmx', headers: { 'content-type': 'application/json' }, payload }));
      expect(soap.headers['content-type']).toBe(SOAP_CONTENT_TYPE['1.1']);
      expect(soap.body).not.toMatch(LEAK);
      const form = await withoutDebit(main, () =>
        main.app.inject({ method: 'POST', url: '/api/reg.asmx/CheckFrance', headers: { 'content-type': 'application/json' }, payload }),
      );
      expect(form.statusCode).toBeGreaterThanOrEqual(400);
      expectPlainTextError(form, form.statusCode, /Request format is invalid/);
      expectPrototypesUnpolluted(cleanPrototypes);
    });
  });

  describe('HTTP GET and POST bindings', () => {
    const form = (app: TestApp, payload: string | Buffer, headers: Record<string, string> = {}, operation = 'CheckFrance') =>
      app.app.inject({ method: 'POST', url: `/api/reg.asmx/${operation}`, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload });

    it('answers a huge query-string value with a plain-text error naming the parameter', async () => {
      const res = await withoutDebit(small, () => small.app.inject({ url: `/api/reg.asmx/CheckFrance?RegistrationNumber=${'A'.repeat(64 * 1024)}&username=${USER}` }));
      expectPlainTextError(res, 500, /RegistrationNumber is longer than 20 characters/);
      expect(res.body.length).toBeLessThan(1024);
    });

    it('answers a query string larger than the HTTP header limit with a plain-text 431', async () => {
      const before = await main.services.accounts.balance(USER);
      const res = await httpGet(mainPort, `/api/reg.asmx/CheckFrance?RegistrationNumber=FK482TR&username=${USER}&pad=${'x'.repeat(64 * 1024)}`);
      expect(await main.services.accounts.balance(USER)).toBe(before);
      expect(res.body).not.toMatch(LEAK);
      expect(res.statusCode).toBe(431);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
    });

    it(`refuses a form body over XML_BODY_LIMIT (${SMALL_LIMIT}) with a plain-text 413`, async () => {
      const res = await withoutDebit(small, () => form(small, `RegistrationNumber=FK482TR&username=${USER}&pad=${'x'.repeat(SMALL_LIMIT)}`));
      expectPlainTextError(res, 413, new RegExp(`larger than ${SMALL_LIMIT} bytes`));
    });

    it('refuses a gzip-bombed form body with a plain-text 413', async () => {
      const bomb = gzipSync(Buffer.concat([Buffer.from(`RegistrationNumber=FK482TR&username=${USER}&pad=`), Buffer.alloc(2 * 1024 * 1024, 0x78)]), { level: 9 });
      expect(bomb.length).toBeLessThan(SMALL_LIMIT);
      const res = await withoutDebit(small, () => form(small, bomb, { 'content-encoding': 'gzip' }));
      expectPlainTextError(res, 413, /inflates to more than/);
    });

    it('ignores __proto__, constructor and prototype form fields and pollutes nothing', async () => {
      const payload = `__proto__=x&__proto__[polluted]=yes&constructor[prototype][polluted]=yes&prototype=yes&hasOwnProperty=x&RegistrationNumber=FK482TR&username=${USER}`;
      const { result, spent } = await creditsSpent(small, () => form(small, payload));
      expect(result.statusCode).toBe(200);
      expect(result.body).toContain('RENAULT CLIO V');
      expect(spent).toBe(1);
      expectPrototypesUnpolluted(cleanPrototypes);
    });

    it('ignores __proto__ query parameters on GET and pollutes nothing', async () => {
      const query = `__proto__[polluted]=yes&constructor[prototype][polluted]=yes&__proto__.polluted=yes&RegistrationNumber=FK482TR&username=${USER}`;
      const { result, spent } = await creditsSpent(small, () => small.app.inject({ url: `/api/reg.asmx/CheckFrance?${query}` }));
      expect(result.statusCode).toBe(200);
      expect(spent).toBe(1);
      expectPrototypesUnpolluted(cleanPrototypes);
    });

    it.each(['__proto__', 'constructor', 'hasOwnProperty'])('answers the username %s as an unknown account', async (user) => {
      const res = await withoutDebit(small, () => form(small, `RegistrationNumber=FK482TR&username=${user}`));
      expectPlainTextError(res, 500, /Your username is incorrect/);
    });

    it.each(['__proto__', 'constructor', 'toString'])('answers the operation name %s as an unknown method on GET and POST', async (operation) => {
      const get = await withoutDebit(small, () => small.app.inject({ url: `/api/reg.asmx/${operation}?RegistrationNumber=FK482TR&username=${USER}` }));
      expectPlainTextError(get, 500, new RegExp(`${operation} Web Service method name is not valid`));
      const post = await withoutDebit(small, () => form(small, `RegistrationNumber=FK482TR&username=${USER}`, {}, operation));
      expectPlainTextError(post, 500, new RegExp(`${operation} Web Service method name is not valid`));
    });

    it.each(['FK482TR%ZZ', '%E0%A4%A', 'FK482TR%', '%FF%FE', '%00FK482TR'])('answers the malformed percent-encoding %s in a form body with a plain-text error', async (plate) => {
      const res = await withoutDebit(small, () => form(small, `RegistrationNumber=${plate}&username=${USER}`));
      expectPlainTextError(res, 500, /RegistrationNumber/);
    });

    it('answers malformed percent-encoding in the path with a plain-text 400', async () => {
      const res = await withoutDebit(small, () => small.app.inject({ url: `/api/reg.asmx/Check%ZZFrance?RegistrationNumber=FK482TR&username=${USER}` }));
      expectPlainTextError(res, 400, /percent-encoding/);
    });

    it('refuses invalid UTF-8 in a form body with a plain-text 400', async () => {
      const payload = Buffer.concat([Buffer.from(`username=${USER}&RegistrationNumber=FK482TR`), Buffer.from([0xc0, 0xaf])]);
      const res = await withoutDebit(small, () => form(small, payload));
      expectPlainTextError(res, 400, /not valid UTF-8/);
    });

    it('refuses a non-UTF-8 charset on a form body with a plain-text 415', async () => {
      const res = await withoutDebit(small, () => form(small, `RegistrationNumber=FK482TR&username=${USER}`, { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' }));
      expectPlainTextError(res, 415, /charset iso-8859-1 is not supported/);
    });
  });

  describe('slow and large uploads on a real socket', () => {
    it.each(VERSIONS)('answers a chunked SOAP %s upload that grows past the limit with a 413 fault', async (version) => {
      const before = await small.services.accounts.balance(USER);
      const headers = soapHeaders(version, `${REG_NS}/CheckFrance`);
      const head = `POST /api/reg.asmx HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\ntransfer-encoding: chunked\r\n\r\n`;
      const start = envelope(version, checkFrance()).replace('<soap:Body>', '');
      const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
      const chunks = [chunk(start.slice(0, 200)), ...Array.from({ length: 64 }, () => chunk(' '.repeat(1024))), '0\r\n\r\n'];
      const res = await rawExchange(smallPort, head, chunks, { delayMs: 2 });
      expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status: 413, type: SOAP_CONTENT_TYPE[version] });
      expect(readFault(version, res.body).message).toMatch(/larger than 4096 bytes/);
      expect(await small.services.accounts.balance(USER)).toBe(before);
    });

    it('answers a declared Content-Length over the limit with a 413 fault without waiting for the body', async () => {
      const head = `POST /api/reg.asmx HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: text/xml; charset=utf-8\r\ncontent-length: ${100 * 1024 * 1024}\r\n\r\n`;
      // The upload stays open: a client that would take minutes to send 100 MiB.
      const res = await rawExchange(smallPort, head, ['<soap:Envelope'], { end: false, timeoutMs: 5000 });
      expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status: 413, type: SOAP_CONTENT_TYPE['1.1'] });
      expect(readFault('1.1', res.body).message).toMatch(/larger than 4096 bytes/);
    });

    it('keeps serving after clients abandon uploads half way', async () => {
      const before = await main.services.accounts.balance(USER);
      const { head } = rawRequest('POST', '/api/reg.asmx', soapHeaders('1.1', `${REG_NS}/CheckFrance`), Buffer.alloc(2000));
      await Promise.all(Array.from({ length: 5 }, () => abortedUpload(mainPort, head, envelope('1.1', checkFrance()).slice(0, 120))));
      expect(await main.services.accounts.balance(USER)).toBe(before);
      const ok = rawRequest('POST', '/api/reg.asmx', soapHeaders('1.1', `${REG_NS}/CheckFrance`), envelope('1.1', checkFrance()));
      // The socket stays open for writing: a client that half-closes after its request loses the
      // answer (Node's server ends the socket on the client's FIN) whenever the lookup is not done
      // by then, as on PostgreSQL; these tests are about what the hostile requests leave behind.
      const res = await rawExchange(mainPort, ok.head, [ok.body], { end: false });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('RENAULT CLIO V');
      expect(await main.services.accounts.balance(USER)).toBe(before - 1);
    });
  });

  describe('the body limit is configurable', () => {
    it('serves a 1.5 MiB request when XML_BODY_LIMIT is 2 MiB and refuses one byte over 2 MiB', async () => {
      const wide = await createTestApp({ XML_BODY_LIMIT: String(2 * 1024 * 1024) }, undefined, engine);
      try {
        await wide.importRecords(sampleLines());
        await wide.account(USER, 10);
        const { result, spent } = await creditsSpent(wide, () => postSoap(wide, '1.1', envelopeOfSize('1.1', 1.5 * 1024 * 1024)));
        expectCheckFranceResult(result, '1.1');
        expect(spent).toBe(1);
        const over = await withoutDebit(wide, () => postSoap(wide, '1.1', envelopeOfSize('1.1', 2 * 1024 * 1024 + 1)));
        expectClientFault(over, '1.1', 413, /larger than 2097152 bytes/);
      } finally {
        await wide.close();
      }
    });
  });

  // Runs last (vitest keeps declaration order within a file): everything above went to these apps.
  describe('after the hostile requests', () => {
    it('still answers normal lookups in both versions, on both apps, by inject and on the socket', async () => {
      for (const app of [main, small]) {
        for (const version of VERSIONS) {
          const { result, spent } = await creditsSpent(app, () => postSoap(app, version, envelope(version, checkFrance())));
          expectCheckFranceResult(result, version);
          expect(spent).toBe(1);
        }
      }
      const ok = rawRequest('POST', '/api/reg.asmx', soapHeaders('1.2', `${REG_NS}/CheckFrance`), envelope('1.2', checkFrance()));
      const res = await rawExchange(smallPort, ok.head, [ok.body], { end: false });
      expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status: 200, type: SOAP_CONTENT_TYPE['1.2'] });
      expect((await httpGet(mainPort, `/api/reg.asmx/CheckFrance?RegistrationNumber=FK482TR&username=${USER}`)).statusCode).toBe(200);
      expectPrototypesUnpolluted(cleanPrototypes);
    });
  });
});
