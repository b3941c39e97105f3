/**
 * A small XML writer for the documents we send: SOAP envelopes (one line), HTTP GET/POST results
 * and WSDL (2-space indentation, as ASMX writes them). Everything written goes through the escapes.
 */

/** Characters XML 1.0 cannot carry at all; dropped rather than producing a document no client can read. */
// eslint-disable-next-line no-control-regex -- matching the control characters XML forbids is the point
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Anything escapeText or escapeAttribute would change; most values contain none of it. */
// eslint-disable-next-line no-control-regex -- the control characters XML forbids are the point
const NEEDS_ESCAPING = /[&<>"\r\n\t\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

/** Escapes element text as .NET's XmlWriter does (& < > and CR as a character reference). */
export function escapeText(text: string): string {
  if (!NEEDS_ESCAPING.test(text)) return text;
  return text.replace(INVALID_XML_CHARS, '').replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#xD;'));
}

/** Escapes an attribute value (double-quoted). */
export function escapeAttribute(text: string): string {
  if (!NEEDS_ESCAPING.test(text)) return text;
  return text
    .replace(INVALID_XML_CHARS, '')
    .replace(/[&<>"\r\n\t]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\r': '&#xD;', '\n': '&#xA;', '\t': '&#x9;' })[c] ?? c);
}

export type Attributes = ReadonlyArray<readonly [string, string]>;

export const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';

export class XmlWriter {
  private readonly parts: string[] = [];
  private readonly stack: string[] = [];
  /** True when the element just opened has child elements (for the closing tag's indentation). */
  private hasChildren: boolean[] = [];

  /** `indent`: 2-space pretty printing; otherwise one line. */
  constructor(private readonly indent: boolean) {}

  declaration(): this {
    this.parts.push(XML_DECLARATION);
    return this;
  }

  open(name: string, attributes: Attributes = []): this {
    this.newline();
    this.parts.push(`<${name}${renderAttributes(attributes)}>`);
    this.markChild();
    this.stack.push(name);
    this.hasChildren.push(false);
    return this;
  }

  close(): this {
    const name = this.stack.pop();
    if (name === undefined) throw new Error('XmlWriter: close() without open()');
    const hadChildren = this.hasChildren.pop() ?? false;
    if (hadChildren) this.newline();
    this.parts.push(`</${name}>`);
    return this;
  }

  /** `<name attrs>text</name>`, or `<name attrs />` for empty text. */
  leaf(name: string, text: string, attributes: Attributes = []): this {
    this.newline();
    this.markChild();
    this.parts.push(text === '' ? `<${name}${renderAttributes(attributes)} />` : `<${name}${renderAttributes(attributes)}>${escapeText(text)}</${name}>`);
    return this;
  }

  /** `<name attrs />`. */
  empty(name: string, attributes: Attributes = []): this {
    return this.leaf(name, '', attributes);
  }

  toString(): string {
    if (this.stack.length > 0) throw new Error(`XmlWriter: unclosed <${this.stack.join('> <')}>`);
    return this.parts.join('');
  }

  private newline(): void {
    if (this.indent && this.parts.length > 0) this.parts.push(`\r\n${'  '.repeat(this.stack.length)}`);
  }

  private markChild(): void {
    if (this.hasChildren.length > 0) this.hasChildren[this.hasChildren.length - 1] = true;
  }
}

function renderAttributes(attributes: Attributes): string {
  return attributes.map(([k, v]) => ` ${k}="${escapeAttribute(v)}"`).join('');
}
