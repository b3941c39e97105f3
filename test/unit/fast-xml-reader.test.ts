import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fastReadXml } from '../../src/xml/fast-xml-reader.js';
import { DEFAULT_XML_LIMITS, readXmlWithSaxes, type XmlElement } from '../../src/xml/xml-reader.js';

const WIRE_CASES = fileURLToPath(new URL('../wire/cases', import.meta.url));

/** Every request body of the golden wire suite: the shapes real clients send. */
function wireBodies(): string[] {
  const bodies: string[] = [];
  for (const name of readdirSync(WIRE_CASES)) {
    const dir = join(WIRE_CASES, name);
    if (!statSync(dir).isDirectory()) continue;
    for (const file of readdirSync(dir)) if (file.startsWith('request.body')) bodies.push(readFileSync(join(dir, file), 'utf8'));
  }
  return bodies;
}

function saxes(text: string): XmlElement | Error {
  try {
    return readXmlWithSaxes(text, DEFAULT_XML_LIMITS);
  } catch (error) {
    return error as Error;
  }
}

/** The fast reader either defers (undefined) or builds exactly what saxes builds. */
function expectAgreement(text: string): 'fast' | 'deferred' {
  const fast = fastReadXml(text, DEFAULT_XML_LIMITS);
  if (fast === undefined) return 'deferred';
  const full = saxes(text);
  expect(full, `saxes refused what the fast reader accepted: ${JSON.stringify(text.slice(0, 200))}`).not.toBeInstanceOf(Error);
  expect(fast).toEqual(full);
  return 'fast';
}

const ENVELOPE = `<?xml version="1.0" encoding="utf-8"?>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <soap:Body>
    <CheckUSA xmlns="http://regcheck.org.uk">
      <RegistrationNumber>AB&amp;12 &#x4B;&#65;&lt;</RegistrationNumber>
      <State xsi:nil="true" />
      <username>alice</username>
    </CheckUSA>
  </soap:Body>
</soap:Envelope>`;

describe('fast XML reader', () => {
  it('reads every golden wire request exactly as saxes does, and most of them itself', () => {
    const bodies = wireBodies().filter((b) => b.trim().startsWith('<'));
    expect(bodies.length).toBeGreaterThan(20);
    const outcomes = bodies.map(expectAgreement);
    expect(outcomes.filter((o) => o === 'fast').length).toBeGreaterThan(bodies.length / 2);
  });

  it('decodes the five entities and numeric references, resolves namespaces and nil attributes', () => {
    expect(expectAgreement(ENVELOPE)).toBe('fast');
    const tree = fastReadXml(ENVELOPE, DEFAULT_XML_LIMITS);
    const op = tree?.children[0]?.children[0];
    expect(op?.uri).toBe('http://regcheck.org.uk');
    expect(op?.children[0]?.text).toBe('AB&12 KA<');
  });

  it('defers to the full parser for DTDs, comments, CDATA, processing instructions and unknown entities', () => {
    for (const text of [
      '<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>',
      '<x><!-- c --></x>',
      '<x><![CDATA[a]]></x>',
      '<?xml version="1.0"?><?pi x?><x/>',
      '<x>&nbsp;</x>',
      '<x>&#0;</x>',
      '<x a="&amp;"/>',
      '<x>a]]>b</x>',
      '<p:x/>',
      '<x xmlns:p=""/>',
      '<x a="1" a="2"/>',
      '<x></y>',
      '<x>',
      '<x/><y/>',
      'text<x/>',
      '<é/>',
      // White space that JavaScript's \s knows and XML does not.
      '<x\u00a0a="1"/>',
      '<?xml\u00a0version="1.0"?><x/>',
      '<x></x\u2028>',
      '<x\u000ba="1"/>',
    ]) {
      expect(fastReadXml(text, DEFAULT_XML_LIMITS), text).toBeUndefined();
    }
  });

  it('defers when a limit is reached, so the full parser reports it', () => {
    const deep = `${'<a>'.repeat(40)}${'</a>'.repeat(40)}`;
    expect(fastReadXml(deep, DEFAULT_XML_LIMITS)).toBeUndefined();
    const wide = `<r>${'<a/>'.repeat(20)}</r>`;
    expect(fastReadXml(wide, { maxDepth: 32, maxElements: 10 })).toBeUndefined();
  });

  it('never accepts a mutation that saxes refuses, and agrees on every one it accepts', () => {
    // Deterministic pseudo-random single-character edits of a realistic envelope.
    let seed = 12345;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    // Non-XML white space (no-break space, vertical tab, form feed, line separator) included: the
    // reader must not take for white space what XML does not.
    const alphabet = ['<', '>', '/', '&', ';', '"', "'", '=', ':', ' ', '\t', '\r', '\n', 'x', '#', '!', '?', ']', '-', '.', '0', '\u0001', '\u000b', '\u000c', '\u00a0', '\u2028', 'é', '\ud83d\ude97'];
    const mutate = (text: string): string => {
      const at = random(text.length);
      const kind = random(3);
      const ch = alphabet[random(alphabet.length)] ?? 'x';
      return kind === 0 ? text.slice(0, at) + ch + text.slice(at) : kind === 1 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + ch + text.slice(at + 1);
    };
    let fast = 0;
    for (let i = 0; i < 6000; i++) {
      // One edit, then two: pairs reach states a single edit cannot (e.g. a renamed end tag).
      const text = i < 3000 ? mutate(ENVELOPE) : mutate(mutate(ENVELOPE));
      if (expectAgreement(text) === 'fast') fast += 1;
    }
    expect(fast).toBeGreaterThan(200);
  });
});
