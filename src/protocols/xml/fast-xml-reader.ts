import type { XmlElement, XmlLimits } from './xml-reader.js';

/**
 * A fast reader for the plain documents clients send nearly always: an optional XML declaration,
 * elements with ASCII names, namespace declarations, attributes, and text with the five XML
 * entities and numeric references. It returns undefined for ANYTHING outside that subset
 * (DOCTYPE, comments, CDATA, processing instructions, other names, odd entities, a broken limit,
 * any doubt about well-formedness), and the caller then uses the full parser (saxes), which
 * decides every error. So this reader never accepts what saxes would refuse, and where it accepts,
 * it builds the same tree (test/unit/fast-xml-reader.test.ts compares the two).
 *
 * Why: saxes took about a quarter of a SOAP lookup's CPU (bench:soap profile).
 */

const NAME = '[A-Za-z_][A-Za-z0-9_.-]*';
const QNAME = `${NAME}(?::${NAME})?`;
const DECLARATION = /^<\?xml\s+version\s*=\s*(["'])1\.[0-9]\1(?:\s+encoding\s*=\s*(["'])[A-Za-z][A-Za-z0-9._-]*\2)?(?:\s+standalone\s*=\s*(["'])(?:yes|no)\3)?\s*\?>/y;
const OPEN = new RegExp(`<(${QNAME})`, 'y');
const ATTRIBUTE = new RegExp(`\\s+(${QNAME})\\s*=\\s*(?:"([^"<&]*)"|'([^'<&]*)')`, 'y');
const OPEN_END = /\s*(\/?)>/y;
const CLOSE = new RegExp(`</(${QNAME})\\s*>`, 'y');
const TEXT = /[^<]*/y;
const WHITESPACE = /^[ \t\r\n]*$/;
/** Characters XML 1.0 allows that this reader passes through unchanged. */
// eslint-disable-next-line no-control-regex -- the excluded control characters are the point
const FORBIDDEN_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const REFERENCE = /&(?:(lt|gt|amp|quot|apos)|#([0-9]{1,7})|#x([0-9A-Fa-f]{1,6}));/g;
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';

const ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function isXmlChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}

/** Decodes character data, or undefined when it holds anything but the references we know. */
function decodeText(raw: string): string | undefined {
  if (FORBIDDEN_CHARS.test(raw) || raw.includes(']]>')) return undefined;
  const text = raw.includes('\r') ? raw.replace(/\r\n?/g, '\n') : raw;
  if (!text.includes('&')) return text;
  // Every "&" must start a reference we decode; anything else is for the full parser to judge.
  if (text.replace(REFERENCE, '').includes('&')) return undefined;
  // An object, not a let: it is set inside the replace callback, which the type-checker cannot follow.
  const state = { valid: true };
  const decoded = text.replace(REFERENCE, (_m, name: string | undefined, dec: string | undefined, hex: string | undefined) => {
    if (name !== undefined) return ENTITIES[name] ?? '';
    const code = dec !== undefined ? Number(dec) : Number.parseInt(hex ?? '', 16);
    if (!isXmlChar(code)) {
      state.valid = false;
      return '';
    }
    return String.fromCodePoint(code);
  });
  return state.valid ? decoded : undefined;
}

/** Attribute values: whitespace characters become spaces (XML 1.0 section 3.3.3). */
function normaliseAttribute(raw: string): string | undefined {
  if (FORBIDDEN_CHARS.test(raw)) return undefined;
  return raw.replace(/\r\n|[\r\n\t]/g, ' ');
}

interface Frame {
  readonly element: XmlElement;
  readonly qname: string;
  readonly scope: ReadonlyMap<string, string>;
}

/** See the module comment. Undefined means: use the full parser. */
export function fastReadXml(text: string, limits: XmlLimits): XmlElement | undefined {
  let pos = 0;
  DECLARATION.lastIndex = 0;
  if (DECLARATION.test(text)) pos = DECLARATION.lastIndex;
  const stack: Frame[] = [];
  let root: XmlElement | undefined;
  let count = 0;
  const rootScope: ReadonlyMap<string, string> = new Map([['xml', XML_NS]]);

  while (pos < text.length) {
    if (text.charCodeAt(pos) !== 0x3c /* < */) {
      TEXT.lastIndex = pos;
      TEXT.exec(text);
      const raw = text.slice(pos, TEXT.lastIndex);
      pos = TEXT.lastIndex;
      const parent = stack.at(-1);
      if (!parent) {
        if (!WHITESPACE.test(raw)) return undefined;
        continue;
      }
      const decoded = decodeText(raw);
      if (decoded === undefined) return undefined;
      parent.element.text += decoded;
      continue;
    }
    const next = text.charCodeAt(pos + 1);
    if (next === 0x2f /* / */) {
      CLOSE.lastIndex = pos;
      const match = CLOSE.exec(text);
      const frame = stack.pop();
      if (!match || !frame || match[1] !== frame.qname) return undefined;
      pos = CLOSE.lastIndex;
      continue;
    }
    if (next === 0x21 /* ! */ || next === 0x3f /* ? */) return undefined;
    if (root && stack.length === 0) return undefined;

    OPEN.lastIndex = pos;
    const open = OPEN.exec(text);
    if (!open?.[1]) return undefined;
    pos = OPEN.lastIndex;
    const qname = open[1];
    const raws: Array<{ qname: string; value: string }> = [];
    for (;;) {
      ATTRIBUTE.lastIndex = pos;
      const attribute = ATTRIBUTE.exec(text);
      if (!attribute?.[1]) break;
      const value = normaliseAttribute(attribute[2] ?? attribute[3] ?? '');
      if (value === undefined || raws.some((a) => a.qname === attribute[1])) return undefined;
      raws.push({ qname: attribute[1], value });
      pos = ATTRIBUTE.lastIndex;
    }
    OPEN_END.lastIndex = pos;
    const end = OPEN_END.exec(text);
    if (!end) return undefined;
    pos = OPEN_END.lastIndex;

    count += 1;
    if (count > limits.maxElements || stack.length >= limits.maxDepth) return undefined;

    const parentScope = stack.at(-1)?.scope ?? rootScope;
    let scope = parentScope;
    for (const a of raws) {
      if (a.qname === 'xmlns' || a.qname.startsWith('xmlns:')) {
        const prefix = a.qname === 'xmlns' ? '' : a.qname.slice(6);
        // Binding xml/xmlns or un-declaring a prefix: rare and subtle, leave it to saxes.
        // So are namespace names with white space (saxes trims them).
        if (prefix === 'xml' || prefix === 'xmlns' || (prefix !== '' && a.value === '') || a.value === XML_NS || a.value === XMLNS_NS || /\s/.test(a.value)) {
          return undefined;
        }
        if (scope === parentScope) scope = new Map(parentScope);
        (scope as Map<string, string>).set(prefix, a.value);
      }
    }
    const resolve = (name: string, isElement: boolean): { uri: string; local: string } | undefined => {
      const colon = name.indexOf(':');
      if (colon < 0) return { uri: isElement ? (scope.get('') ?? '') : '', local: name };
      const uri = scope.get(name.slice(0, colon));
      return uri === undefined ? undefined : { uri, local: name.slice(colon + 1) };
    };
    const name = resolve(qname, true);
    if (!name) return undefined;
    const attributes: Array<{ uri: string; local: string; value: string }> = [];
    for (const a of raws) {
      if (a.qname === 'xmlns') {
        attributes.push({ uri: XMLNS_NS, local: 'xmlns', value: a.value });
        continue;
      }
      const resolved = a.qname.startsWith('xmlns:') ? { uri: XMLNS_NS, local: a.qname.slice(6) } : resolve(a.qname, false);
      if (!resolved) return undefined;
      // Two attributes with the same expanded name are an error for saxes; let it say so.
      if (attributes.some((x) => x.uri === resolved.uri && x.local === resolved.local)) return undefined;
      attributes.push({ uri: resolved.uri, local: resolved.local, value: a.value });
    }

    const element: XmlElement = { uri: name.uri, local: name.local, attributes, children: [], text: '' };
    const parent = stack.at(-1);
    if (parent) parent.element.children.push(element);
    else root = element;
    if (end[1] !== '/') stack.push({ element, qname, scope });
  }
  if (stack.length > 0 || !root) return undefined;
  return root;
}
