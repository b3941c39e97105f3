import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DocumentShapes } from '../../src/xml/document-shapes.js';
import { fastReadXml, type ReadDetails } from '../../src/xml/fast-xml-reader.js';
import { DEFAULT_XML_LIMITS, readXml, readXmlWithSaxes, type XmlElement, type XmlLimits } from '../../src/xml/xml-reader.js';

const WIRE_CASES = fileURLToPath(new URL('../wire/cases', import.meta.url));

/** The XML request bodies of the golden wire suite: the envelopes real clients send. */
function wireEnvelopes(): string[] {
  const bodies: string[] = [];
  for (const name of readdirSync(WIRE_CASES)) {
    const dir = join(WIRE_CASES, name);
    if (!statSync(dir).isDirectory()) continue;
    for (const file of readdirSync(dir)) {
      if (!file.startsWith('request.body')) continue;
      const body = readFileSync(join(dir, file), 'utf8');
      if (body.trim().startsWith('<')) bodies.push(body);
    }
  }
  return bodies;
}

function saxes(text: string, limits: XmlLimits = DEFAULT_XML_LIMITS): XmlElement | Error {
  try {
    return readXmlWithSaxes(text, limits);
  } catch (error) {
    return error as Error;
  }
}

/** Teaches `shapes` the shape of `text` as readXml does; false when the fast reader defers. */
function learn(shapes: DocumentShapes, text: string): boolean {
  const details: ReadDetails = { leaves: [], elements: 0, depth: 0 };
  const tree = fastReadXml(text, DEFAULT_XML_LIMITS, details);
  if (!tree) return false;
  shapes.learn(text, tree, details);
  return true;
}

/** A shape either does not match, or builds exactly what saxes builds. */
function expectAgreement(shapes: DocumentShapes, text: string, limits: XmlLimits = DEFAULT_XML_LIMITS): 'shape' | 'other' {
  const built = shapes.read(text, limits);
  if (built === undefined) return 'other';
  const full = saxes(text, limits);
  expect(full, `saxes refused what a shape matched: ${JSON.stringify(text.slice(0, 300))}`).not.toBeInstanceOf(Error);
  expect(built).toEqual(full);
  return 'shape';
}

const ENVELOPE = (plate: string, state: string, username: string): string => `<?xml version="1.0" encoding="utf-8"?>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <soap:Body>
    <CheckUSA xmlns="http://regcheck.org.uk">
      <RegistrationNumber>${plate}</RegistrationNumber>
      <State>${state}</State>
      <username>${username}</username>
      <Note xsi:nil="true" />
    </CheckUSA>
  </soap:Body>
</soap:Envelope>`;

describe('document shapes', () => {
  it('builds a document of a learnt shape with its own values, exactly as saxes reads it', () => {
    const shapes = new DocumentShapes();
    expect(learn(shapes, ENVELOPE('7KDJ294', 'CA', 'alice'))).toBe(true);
    const text = ENVELOPE('H84 JAE-é', '', 'bob > carol');
    expect(expectAgreement(shapes, text)).toBe('shape');
    const op = shapes.read(text, DEFAULT_XML_LIMITS)?.children[0]?.children[0];
    expect(op?.children.map((c) => [c.local, c.text])).toEqual([
      ['RegistrationNumber', 'H84 JAE-é'],
      ['State', ''],
      ['username', 'bob > carol'],
      ['Note', ''],
    ]);
    expect(op?.children[3]?.attributes).toEqual([{ uri: 'http://www.w3.org/2001/XMLSchema-instance', local: 'nil', value: 'true' }]);
  });

  it('leaves values that need decoding or checking, and markup inside a value, to the reader', () => {
    const shapes = new DocumentShapes();
    learn(shapes, ENVELOPE('7KDJ294', 'CA', 'alice'));
    for (const plate of ['A&amp;B', 'A&#65;', 'A]]>B', 'A]B', 'A\nB', 'A\rB', 'A\tB', 'A\u0001B', '<b>x</b>', 'x<!-- c -->', '<![CDATA[x]]>', 'A\ud83d\ude97']) {
      const text = ENVELOPE(plate, 'CA', 'alice');
      expect(shapes.read(text, DEFAULT_XML_LIMITS), plate).toBeUndefined();
      // readXml still reads (or refuses) it as saxes does.
      const full = saxes(text);
      if (full instanceof Error) expect(() => readXml(text)).toThrow();
      else expect(readXml(text)).toEqual(full);
    }
  });

  it('matches nothing but the exact fixed text: white space, attributes, names and namespaces count', () => {
    const shapes = new DocumentShapes();
    learn(shapes, ENVELOPE('7KDJ294', 'CA', 'alice'));
    const base = ENVELOPE('7KDJ294', 'CA', 'alice');
    for (const [from, to] of [
      ['<State>', '<State >'],
      ['  <soap:Body>', ' <soap:Body>'],
      ['xmlns="http://regcheck.org.uk"', 'xmlns="http://regcheck.org.uk/"'],
      ['CheckUSA xmlns', 'CheckUSB xmlns'],
      ['xsi:nil="true"', 'xsi:nil="false"'],
      ['</soap:Envelope>', '</soap:Envelope>\n'],
      ['<?xml version="1.0" encoding="utf-8"?>', ''],
    ] as const) {
      const text = base.replace(from, to);
      expect(text).not.toBe(base);
      expect(shapes.read(text, DEFAULT_XML_LIMITS), `${from} -> ${to}`).toBeUndefined();
    }
  });

  it('treats an empty leaf as a value, and a self-closing one as fixed text', () => {
    const shapes = new DocumentShapes();
    learn(shapes, '<r><a></a><b/></r>');
    expect(expectAgreement(shapes, '<r><a>x y</a><b/></r>')).toBe('shape');
    expect(expectAgreement(shapes, '<r><a></a><b/></r>')).toBe('shape');
    expect(shapes.read('<r><a/><b/></r>', DEFAULT_XML_LIMITS)).toBeUndefined();
    expect(shapes.read('<r><a></a><b></b></r>', DEFAULT_XML_LIMITS)).toBeUndefined();
  });

  it('keeps mixed content and decoded text fixed, and learns nothing from a document without values', () => {
    const shapes = new DocumentShapes();
    learn(shapes, '<r>a<b>1</b>c</r>');
    expect(expectAgreement(shapes, '<r>a<b>2</b>c</r>')).toBe('shape');
    expect(shapes.read('<r>x<b>2</b>c</r>', DEFAULT_XML_LIMITS)).toBeUndefined();
    learn(shapes, '<s><t>&amp;</t><u>1</u></s>');
    expect(expectAgreement(shapes, '<s><t>&amp;</t><u>2</u></s>')).toBe('shape');
    expect(shapes.read('<s><t>&lt;</t><u>2</u></s>', DEFAULT_XML_LIMITS)).toBeUndefined();
    const empty = new DocumentShapes();
    learn(empty, '<r><a/></r>');
    expect(empty.size).toBe(0);
  });

  it('defers when the shape breaks the limits of this read, so the reader reports them', () => {
    const shapes = new DocumentShapes();
    const text = `<r>${'<a>1</a>'.repeat(20)}</r>`;
    learn(shapes, text);
    expect(shapes.read(text, DEFAULT_XML_LIMITS)).toBeDefined();
    expect(shapes.read(text, { maxDepth: 32, maxElements: 10 })).toBeUndefined();
    expect(shapes.read(text, { maxDepth: 1, maxElements: 100 })).toBeUndefined();
  });

  it('hands out a fresh tree each time', () => {
    const shapes = new DocumentShapes();
    learn(shapes, '<r><a>1</a></r>');
    const first = shapes.read('<r><a>2</a></r>', DEFAULT_XML_LIMITS);
    if (!first) throw new Error('no match');
    first.text = 'changed';
    first.children.push({ uri: '', local: 'extra', attributes: [], children: [], text: '' });
    expect(shapes.read('<r><a>3</a></r>', DEFAULT_XML_LIMITS)).toEqual(saxes('<r><a>3</a></r>'));
  });

  it('keeps at most its capacity of shapes, the most recently used', () => {
    const shapes = new DocumentShapes(2);
    learn(shapes, '<a><x>1</x></a>');
    learn(shapes, '<b><x>1</x></b>');
    expect(shapes.read('<a><x>2</x></a>', DEFAULT_XML_LIMITS)).toBeDefined();
    learn(shapes, '<c><x>1</x></c>');
    expect(shapes.size).toBe(2);
    expect(shapes.read('<a><x>3</x></a>', DEFAULT_XML_LIMITS)).toBeDefined();
    expect(shapes.read('<b><x>3</x></b>', DEFAULT_XML_LIMITS)).toBeUndefined();
    expect(shapes.read('<c><x>3</x></c>', DEFAULT_XML_LIMITS)).toBeDefined();
    // A shape already kept is not kept twice.
    learn(shapes, '<c><x>4</x></c>');
    expect(shapes.size).toBe(2);
  });

  it('learns no document longer than its bound', () => {
    const shapes = new DocumentShapes(4, 64);
    learn(shapes, `<r><a>${'x'.repeat(100)}</a></r>`);
    expect(shapes.size).toBe(0);
  });

  it('reads every golden wire envelope, with any values, exactly as saxes does', () => {
    const envelopes = wireEnvelopes();
    expect(envelopes.length).toBeGreaterThan(20);
    let seed = 4242;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    // Characters a value may hold as it is, and ones that must send the document to the reader.
    const alphabet = ['A', 'z', '7', ' ', '-', '>', '"', "'", '=', '/', ':', 'é', '中', '<', '&', ']', ';', '#', '\t', '\n', '\r', '\u0001', '\ud83d\ude97', '\udc00'];
    let matched = 0;
    let learnt = 0;
    for (const envelope of envelopes) {
      const shapes = new DocumentShapes();
      if (!learn(shapes, envelope)) continue;
      learnt += 1;
      const details: ReadDetails = { leaves: [], elements: 0, depth: 0 };
      fastReadXml(envelope, DEFAULT_XML_LIMITS, details);
      for (let i = 0; i < 300; i++) {
        // Every value replaced by 0-8 random characters, working from the end so offsets hold.
        let text = envelope;
        for (const leaf of [...details.leaves].reverse()) {
          const value = Array.from({ length: random(9) }, () => alphabet[random(i < 150 ? 13 : alphabet.length)]).join('');
          text = text.slice(0, leaf.start) + value + text.slice(leaf.end);
        }
        // Now and then, one edit of the fixed text as well.
        if (i % 10 === 9) {
          const at = random(text.length);
          text = text.slice(0, at) + (alphabet[random(alphabet.length)] ?? '') + text.slice(at + 1);
        }
        if (expectAgreement(shapes, text) === 'shape') matched += 1;
      }
    }
    // Every plain-valued variant matches (the first 150 of each envelope, but those with a fixed-text edit).
    expect(learnt).toBeGreaterThan(20);
    expect(matched).toBeGreaterThanOrEqual(learnt * 135);
  });

  it('is what readXml uses: a second request of the same shape reads the same as saxes', () => {
    const first = ENVELOPE('AB12CDE', 'NY', 'alice');
    const second = ENVELOPE('ZZ99ZZZ', 'TX', 'bob');
    expect(readXml(first)).toEqual(saxes(first));
    expect(readXml(second)).toEqual(saxes(second));
  });
});
