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

/** The XML declaration; white space is XML's own (space, tab, CR, LF), not JavaScript's wider \s. */
const DECLARATION = /^<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(["'])1\.[0-9]\1(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(["'])[A-Za-z][A-Za-z0-9._-]*\2)?(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(["'])(?:yes|no)\3)?[ \t\r\n]*\?>/y;
const WHITESPACE = /^[ \t\r\n]*$/;
/** Characters XML 1.0 allows that this reader passes through unchanged. */
// eslint-disable-next-line no-control-regex -- the excluded control characters are the point
const FORBIDDEN_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const REFERENCE = /&(?:(lt|gt|amp|quot|apos)|#([0-9]{1,7})|#x([0-9A-Fa-f]{1,6}));/g;
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';

/** Shared by every element without attributes (the list is read-only to consumers). */
const NO_ATTRIBUTES: XmlElement['attributes'] = Object.freeze([]);

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
  if (isPlain(raw)) return raw;
  if (FORBIDDEN_CHARS.test(raw)) return undefined;
  return raw.replace(/\r\n|[\r\n\t]/g, ' ');
}

/** True when every character is printable ASCII or a BMP letter below the surrogates: nothing to check or change. */
function isPlain(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x20 || c >= 0xd800) return false;
  }
  return true;
}

/** XML white space (S in XML 1.0): space, tab, CR, LF, and nothing else. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d;
}

/** End of the ASCII name starting at `pos` ([A-Za-z_][A-Za-z0-9_.-]*), or -1 when none starts there. */
function nameEnd(text: string, pos: number): number {
  if (!isNameStart(text.charCodeAt(pos))) return -1;
  let end = pos + 1;
  while (end < text.length && isNameChar(text.charCodeAt(end))) end += 1;
  return end;
}

/** End of the qualified name starting at `pos` (name, optionally `:` and a second name), or -1. */
function qnameEnd(text: string, pos: number): number {
  const end = nameEnd(text, pos);
  if (end < 0 || text.charCodeAt(end) !== 0x3a /* : */) return end;
  // A colon not followed by a name ends nothing we read: the caller then defers.
  return nameEnd(text, end + 1);
}

/**
 * True when text[start, end) is `name`. Compared in place, character by character: no string is
 * cut out of the text per end tag, and for names this short a loop beats String.startsWith.
 */
function nameAt(text: string, start: number, end: number, name: string): boolean {
  if (end - start !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (text.charCodeAt(start + i) !== name.charCodeAt(i)) return false;
  return true;
}

function skipSpace(text: string, pos: number): number {
  let at = pos;
  while (at < text.length && isSpace(text.charCodeAt(at))) at += 1;
  return at;
}

/** Namespace declarations of one element: prefix ('' for the default) and namespace name. */
type Bindings = ReadonlyArray<readonly [string, string]>;

interface Frame {
  readonly element: XmlElement;
  readonly qname: string;
  readonly bindings: Bindings | undefined;
  /** Runs of character data read directly inside the element so far. */
  textRuns: number;
  /** Where the last run starts and ends in the text, and whether it needed no decoding. */
  textStart: number;
  textEnd: number;
  textPlain: boolean;
}

/**
 * A leaf element (no element children) whose content is one run of plain character data, or
 * nothing: where that content lies in the text. `start === end` for an empty leaf.
 */
export interface LeafText {
  readonly element: XmlElement;
  readonly start: number;
  readonly end: number;
}

/** What a successful read saw besides the tree (document-shapes.ts learns a shape from it). */
export interface ReadDetails {
  /** Leaves with plain or empty content, in document order. */
  readonly leaves: LeafText[];
  /** Elements read, and the deepest nesting (1 for a lone root). */
  elements: number;
  depth: number;
}

/**
 * The namespace a prefix is bound to: the element's own declarations first, then its ancestors'
 * from the nearest out, then the predefined `xml`. Undefined when nothing binds it.
 */
function namespaceOf(prefix: string, own: Bindings | undefined, stack: readonly Frame[]): string | undefined {
  if (own) for (const [p, uri] of own) if (p === prefix) return uri;
  for (let i = stack.length - 1; i >= 0; i--) {
    const bindings = stack[i]?.bindings;
    if (bindings) for (const [p, uri] of bindings) if (p === prefix) return uri;
  }
  return prefix === 'xml' ? XML_NS : undefined;
}

/**
 * Expands a qualified name: unprefixed elements take the default namespace, unprefixed attributes
 * none. Undefined for an undeclared prefix.
 */
function resolveName(name: string, isElement: boolean, own: Bindings | undefined, stack: readonly Frame[]): { uri: string; local: string } | undefined {
  const colon = name.indexOf(':');
  if (colon < 0) return { uri: isElement ? (namespaceOf('', own, stack) ?? '') : '', local: name };
  const uri = namespaceOf(name.slice(0, colon), own, stack);
  return uri === undefined ? undefined : { uri, local: name.slice(colon + 1) };
}

/**
 * See the module comment. Undefined means: use the full parser.
 *
 * A character scanner rather than regular expressions per token: this runs on every SOAP, GET
 * and POST request, and the regular-expression version was a tenth of a SOAP lookup's CPU.
 */
export function fastReadXml(text: string, limits: XmlLimits, details?: ReadDetails): XmlElement | undefined {
  let pos = 0;
  DECLARATION.lastIndex = 0;
  if (DECLARATION.test(text)) pos = DECLARATION.lastIndex;
  const stack: Frame[] = [];
  let root: XmlElement | undefined;
  let count = 0;
  const length = text.length;

  while (pos < length) {
    if (text.charCodeAt(pos) !== 0x3c /* < */) {
      // One pass to the next '<', noting whether the text needs decoding or checking at all.
      let end = pos;
      let plain = true;
      for (; end < length; end++) {
        const c = text.charCodeAt(end);
        if (c === 0x3c /* < */) break;
        if (c < 0x20 || c >= 0xd800 || c === 0x26 /* & */ || c === 0x5d /* ] */) plain = false;
      }
      const raw = text.slice(pos, end);
      const parent = stack[stack.length - 1];
      if (!parent) {
        if (!WHITESPACE.test(raw)) return undefined;
        pos = end;
        continue;
      }
      const decoded = plain ? raw : decodeText(raw);
      if (decoded === undefined) return undefined;
      parent.element.text += decoded;
      parent.textRuns += 1;
      parent.textStart = pos;
      parent.textEnd = end;
      parent.textPlain = plain;
      pos = end;
      continue;
    }
    const next = text.charCodeAt(pos + 1);
    if (next === 0x2f /* / */) {
      const end = qnameEnd(text, pos + 2);
      if (end < 0) return undefined;
      const frame = stack.pop();
      if (!frame || !nameAt(text, pos + 2, end, frame.qname)) return undefined;
      const close = skipSpace(text, end);
      if (text.charCodeAt(close) !== 0x3e /* > */) return undefined;
      if (details && frame.element.children.length === 0) {
        if (frame.textRuns === 0) details.leaves.push({ element: frame.element, start: pos, end: pos });
        else if (frame.textRuns === 1 && frame.textPlain) details.leaves.push({ element: frame.element, start: frame.textStart, end: frame.textEnd });
      }
      pos = close + 1;
      continue;
    }
    if (next === 0x21 /* ! */ || next === 0x3f /* ? */) return undefined;
    if (root && stack.length === 0) return undefined;

    const qnameStop = qnameEnd(text, pos + 1);
    if (qnameStop < 0) return undefined;
    const qname = text.slice(pos + 1, qnameStop);
    pos = qnameStop;
    // Most elements of a request have no attributes: the list is made with the first one.
    let raws: Array<{ qname: string; value: string; spaced: boolean }> | undefined;
    let selfClosing = false;
    for (;;) {
      const afterSpace = skipSpace(text, pos);
      const c = text.charCodeAt(afterSpace);
      if (c === 0x3e /* > */) {
        pos = afterSpace + 1;
        break;
      }
      if (c === 0x2f /* / */) {
        if (text.charCodeAt(afterSpace + 1) !== 0x3e) return undefined;
        selfClosing = true;
        pos = afterSpace + 2;
        break;
      }
      // An attribute: white space before it, then name = "value" or 'value'.
      if (afterSpace === pos) return undefined;
      const attributeEnd = qnameEnd(text, afterSpace);
      if (attributeEnd < 0) return undefined;
      const attributeName = text.slice(afterSpace, attributeEnd);
      const eq = skipSpace(text, attributeEnd);
      if (text.charCodeAt(eq) !== 0x3d /* = */) return undefined;
      const open = skipSpace(text, eq + 1);
      const quote = text.charCodeAt(open);
      if (quote !== 0x22 /* " */ && quote !== 0x27 /* ' */) return undefined;
      // One pass to the closing quote: '<' and '&' defer, anything else unusual takes the slow path.
      let close = open + 1;
      let plain = true;
      let spaced = false;
      for (; close < length; close++) {
        const c = text.charCodeAt(close);
        if (c === quote) break;
        if (c === 0x3c /* < */ || c === 0x26 /* & */) return undefined;
        if (c <= 0x20 || c >= 0x80) {
          // Anything JavaScript's \s could match is a space or beyond ASCII.
          spaced = true;
          if (c < 0x20 || c >= 0xd800) plain = false;
        }
      }
      if (close >= length) return undefined;
      const rawValue = text.slice(open + 1, close);
      const value = plain ? rawValue : normaliseAttribute(rawValue);
      if (value === undefined) return undefined;
      if (raws) for (const a of raws) if (a.qname === attributeName) return undefined;
      (raws ??= []).push({ qname: attributeName, value, spaced });
      pos = close + 1;
    }

    count += 1;
    if (count > limits.maxElements || stack.length >= limits.maxDepth) return undefined;

    let bindings: Array<readonly [string, string]> | undefined;
    if (raws) for (const a of raws) {
      if (a.qname === 'xmlns' || a.qname.startsWith('xmlns:')) {
        const prefix = a.qname === 'xmlns' ? '' : a.qname.slice(6);
        // Binding xml/xmlns or un-declaring a prefix: rare and subtle, leave it to saxes.
        // So are namespace names with white space (saxes trims them).
        if (prefix === 'xml' || prefix === 'xmlns' || (prefix !== '' && a.value === '') || a.value === XML_NS || a.value === XMLNS_NS || (a.spaced && /\s/.test(a.value))) {
          return undefined;
        }
        (bindings ??= []).push([prefix, a.value]);
      }
    }
    // The element's expanded name: an unprefixed one takes the default namespace.
    const colon = qname.indexOf(':');
    const elementUri = namespaceOf(colon < 0 ? '' : qname.slice(0, colon), bindings, stack);
    if (elementUri === undefined && colon >= 0) return undefined;
    let attributes = NO_ATTRIBUTES;
    if (raws) {
      const list: Array<{ uri: string; local: string; value: string }> = [];
      for (const a of raws) {
        if (a.qname === 'xmlns') {
          list.push({ uri: XMLNS_NS, local: 'xmlns', value: a.value });
          continue;
        }
        const resolved = a.qname.startsWith('xmlns:') ? { uri: XMLNS_NS, local: a.qname.slice(6) } : resolveName(a.qname, false, bindings, stack);
        if (!resolved) return undefined;
        // Two attributes with the same expanded name are an error for saxes; let it say so.
        for (const x of list) if (x.uri === resolved.uri && x.local === resolved.local) return undefined;
        list.push({ uri: resolved.uri, local: resolved.local, value: a.value });
      }
      attributes = list;
    }

    const element: XmlElement = { uri: elementUri ?? '', local: colon < 0 ? qname : qname.slice(colon + 1), attributes, children: [], text: '' };
    const parent = stack[stack.length - 1];
    if (parent) parent.element.children.push(element);
    else root = element;
    if (details && stack.length + 1 > details.depth) details.depth = stack.length + 1;
    if (!selfClosing) stack.push({ element, qname, bindings, textRuns: 0, textStart: 0, textEnd: 0, textPlain: true });
  }
  if (stack.length > 0 || !root) return undefined;
  if (details) details.elements = count;
  return root;
}
