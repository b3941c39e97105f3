/**
 * A streaming XML reader for the DMR export (upstream-sources.md §10.2), written for speed: saxes
 * (the strict parser the rest of the service uses) cost about 40% of a DMR import's reading on its
 * own (docs/benchmarks.md, issue 35), most of it checking name characters one at a time.
 *
 * It reads what an export can hold: the XML declaration, elements with qualified names (not
 * namespace-resolved: the import reads local names, as saxes did with `xmlns: false`), attributes
 * (checked, then dropped: the record keeps none), text with the five predefined entities and
 * character references, CDATA sections, comments and processing instructions, and a DOCTYPE
 * without an internal subset. Chunks may end anywhere (inside a tag, a comment, an entity); the
 * caller decodes UTF-8 with a streaming decoder, so a character split across chunks arrives whole.
 *
 * Anything not well formed stops it with an XmlSyntaxError naming the line. It checks what
 * saxes checks for these constructs (matching end tags, one root, no text outside it, name
 * characters, attribute syntax and duplicates, known entities, characters XML forbids, `]]>` in
 * text, `--` in comments, the declaration only at the start); test/import-bulk/dmr-xml-reader.test.ts
 * runs fixtures, tricky documents and malformed ones through both at every chunk boundary. What it
 * does not check: the XML declaration's pseudo-attributes, and a DOCTYPE's content (one with an
 * internal subset is refused as unsupported; saxes skips it).
 */

/** What the reader reports, in document order. */
export interface XmlHandler {
  /** A start tag, by qualified name (an empty-element tag is followed at once by `close`). */
  open(name: string): void;
  /** Character data inside the root element, entities decoded; one run of text may come in several pieces. */
  text(text: string): void;
  /** The end of the element opened last. */
  close(): void;
}

export class XmlSyntaxError extends Error {
  override readonly name = 'XmlSyntaxError';
  constructor(
    reason: string,
    /** 1-based line of the construct in error. */
    readonly line: number,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/** Characters XML 1.0 forbids anywhere (§2.2); a streaming decoder never yields lone surrogates. */
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const FORBIDDEN_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const ASCII_NAME = /^[A-Za-z_:][A-Za-z0-9_:.-]*$/;
const NAME_START = ':A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}';
const NAME_CHAR = `${NAME_START}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040`;
const NAME = `[${NAME_START}][${NAME_CHAR}]*`;
// eslint-disable-next-line no-misleading-character-class -- XML's NameChar includes the combining marks U+0300-U+036F as a range (§2.3)
const UNICODE_NAME = new RegExp(`^${NAME}$`, 'u');
// eslint-disable-next-line no-misleading-character-class -- as UNICODE_NAME
const ATTRIBUTE = new RegExp(`[ \\t\\r\\n]+(${NAME})[ \\t\\r\\n]*=[ \\t\\r\\n]*(?:"([^<"]*)"|'([^<']*)')`, 'uy');
const SPACE_TO_END = /[ \t\r\n]*$/y;
const ALL_SPACE = /^[ \t\r\n]*$/;
const DECIMAL_REF = /^#[0-9]+$/;
const HEX_REF = /^#x[0-9A-Fa-f]+$/;
/** Text without markup longer than this is passed on before its end is seen, so memory stays bounded. */
const MAX_PENDING_TEXT = 1 << 20;
/** A tag, comment, CDATA section or processing instruction longer than this is refused, so an unclosed one cannot hold the whole file. */
const MAX_MARKUP = 16 << 20;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;

const isName = (name: string): boolean => ASCII_NAME.test(name) || UNICODE_NAME.test(name);

const isXmlChar = (code: number): boolean => code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);

const PREDEFINED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Line ends as XML reads them (§2.11): CR LF and a lone CR are LF. */
const normaliseLineEnds = (text: string): string => (text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text);

export class DmrXmlReader {
  /** Unread input; `pos` is where reading resumes. */
  private buf = '';
  private pos = 0;
  /** Line number of `buf[0]`. */
  private line = 1;
  private readonly open: string[] = [];
  private rootSeen = false;
  private rootClosed = false;
  /** Whether anything has been read (the XML declaration may only come first). */
  private started = false;
  private doctypeSeen = false;
  private ended = false;

  constructor(private readonly handler: XmlHandler) {}

  /** Reads a chunk of the document. */
  write(chunk: string): void {
    if (this.ended) throw new Error('DmrXmlReader.write after end');
    const forbidden = chunk.search(FORBIDDEN_CHAR);
    this.append(forbidden === -1 ? chunk : chunk.slice(0, forbidden));
    this.scan(false);
    if (forbidden !== -1) this.fail(`a character XML does not allow (U+${(chunk.charCodeAt(forbidden)).toString(16).toUpperCase().padStart(4, '0')})`, this.buf.length);
  }

  /** The document ended: checks that it ended whole. */
  end(): void {
    this.ended = true;
    this.scan(true);
    if (this.pos < this.buf.length) this.fail('the document ends inside markup', this.pos);
    if (this.open.length > 0) this.fail(`the document ends before </${this.open[this.open.length - 1] ?? ''}> (cut short?)`, this.buf.length);
    if (!this.rootSeen) this.fail('no root element: not a DMR export', this.buf.length);
  }

  private append(chunk: string): void {
    if (this.pos === this.buf.length) {
      this.line += countLines(this.buf, 0, this.pos);
      this.buf = chunk;
    } else {
      this.line += countLines(this.buf, 0, this.pos);
      this.buf = this.buf.slice(this.pos) + chunk;
    }
    this.pos = 0;
  }

  private fail(reason: string, at: number): never {
    throw new XmlSyntaxError(reason, this.line + countLines(this.buf, 0, Math.min(at, this.buf.length)));
  }

  private scan(final: boolean): void {
    const buf = this.buf;
    const n = buf.length;
    let pos = this.pos;
    while (pos < n) {
      const lt = buf.indexOf('<', pos);
      if (lt !== pos) {
        if (lt === -1) {
          if (!final && n - pos < MAX_PENDING_TEXT) break;
          const end = final ? n : safeTextEnd(buf, pos, n);
          this.characters(pos, end);
          pos = end;
          if (!final) break;
          continue;
        }
        this.characters(pos, lt);
        pos = lt;
      }
      const next = this.markup(pos, final);
      if (next === -1) {
        if (n - pos > MAX_MARKUP) this.fail(`markup longer than ${MAX_MARKUP / (1 << 20)} MiB (an unclosed tag, comment or CDATA section?)`, pos);
        break;
      }
      pos = next;
      this.started = true;
    }
    this.pos = pos;
  }

  /** Text from `from` to `to`. */
  private characters(from: number, to: number): void {
    const raw = this.buf.slice(from, to);
    if (this.open.length === 0) {
      if (!ALL_SPACE.test(raw)) this.fail(this.rootSeen ? 'text after the root element' : 'text before the root element', from);
      this.started = true;
      return;
    }
    this.started = true;
    if (raw.includes(']]>')) this.fail('"]]>" in text', from + raw.indexOf(']]>'));
    const text = normaliseLineEnds(raw);
    this.handler.text(text.includes('&') ? this.decode(text, from) : text);
  }

  /** Reads the markup at `pos` (a '<'); returns where reading goes on, or -1 when the chunk ends inside it. */
  private markup(pos: number, final: boolean): number {
    const buf = this.buf;
    const second = buf.charCodeAt(pos + 1);
    if (Number.isNaN(second)) return this.need(pos, final);
    if (second === 0x2f /* / */) {
      const gt = buf.indexOf('>', pos + 2);
      if (gt === -1) return this.need(pos, final);
      let nameEnd = gt;
      while (isSpace(buf.charCodeAt(nameEnd - 1))) nameEnd -= 1;
      const expected = this.open[this.open.length - 1];
      if (expected === undefined) this.fail(`an end tag </${buf.slice(pos + 2, nameEnd)}> with no element open`, pos);
      if (nameEnd - pos - 2 !== expected.length || !buf.startsWith(expected, pos + 2)) this.fail(`</${buf.slice(pos + 2, nameEnd)}> where </${expected}> was expected`, pos);
      this.open.pop();
      if (this.open.length === 0) this.rootClosed = true;
      this.handler.close();
      return gt + 1;
    }
    if (second === 0x21 /* ! */) return this.declaration(pos, final);
    if (second === 0x3f /* ? */) {
      const close = buf.indexOf('?>', pos + 2);
      if (close === -1) return this.need(pos, final);
      const target = /^[^ \t\r\n?]*/.exec(buf.slice(pos + 2, close))?.[0] ?? '';
      if (!isName(target)) this.fail(`a processing instruction without a valid target ("${target}")`, pos);
      if (target.toLowerCase() === 'xml' && (target !== 'xml' || this.started)) this.fail('the XML declaration is allowed only at the start of the document', pos);
      return close + 2;
    }
    const gt = tagEnd(buf, pos + 1);
    if (gt === -1) return this.need(pos, final);
    this.startTag(pos, gt);
    return gt + 1;
  }

  private startTag(pos: number, gt: number): void {
    const buf = this.buf;
    const selfClosing = buf.charCodeAt(gt - 1) === 0x2f;
    const inner = buf.slice(pos + 1, selfClosing ? gt - 1 : gt);
    let nameEnd = 0;
    while (nameEnd < inner.length && !isSpace(inner.charCodeAt(nameEnd))) nameEnd += 1;
    const name = nameEnd === inner.length ? inner : inner.slice(0, nameEnd);
    if (!isName(name)) this.fail(`a tag with an invalid name ("${name}")`, pos);
    if (nameEnd < inner.length) this.attributes(inner, nameEnd, pos);
    if (this.open.length === 0) {
      if (this.rootClosed) this.fail(`a second root element <${name}>`, pos);
      this.rootSeen = true;
    }
    this.handler.open(name);
    if (selfClosing) {
      if (this.open.length === 0) this.rootClosed = true;
      this.handler.close();
    } else this.open.push(name);
  }

  /** Checks the attributes of a start tag (the record keeps none of them). */
  private attributes(inner: string, from: number, pos: number): void {
    const seen = new Set<string>();
    let at = from;
    for (;;) {
      ATTRIBUTE.lastIndex = at;
      const match = ATTRIBUTE.exec(inner);
      if (match === null) break;
      const attribute = match[1] ?? '';
      if (seen.has(attribute)) this.fail(`the attribute ${attribute} twice`, pos);
      seen.add(attribute);
      const value = match[2] ?? match[3] ?? '';
      if (value.includes('&')) this.decode(value, pos);
      at = ATTRIBUTE.lastIndex;
    }
    SPACE_TO_END.lastIndex = at;
    if (!SPACE_TO_END.test(inner) || SPACE_TO_END.lastIndex !== inner.length) this.fail('a malformed attribute', pos);
  }

  /** The chunk ends inside the markup at `pos`: -1 (read on with the next chunk), or an error at the end of the document. */
  private need(pos: number, final: boolean): -1 {
    return final ? this.fail('the document ends inside markup', pos) : -1;
  }

  /** `<!--`, `<![CDATA[` or `<!DOCTYPE` at `pos`. */
  private declaration(pos: number, final: boolean): number {
    const buf = this.buf;
    if (buf.length - pos < 9 && !final) {
      // Not enough to tell which: wait, unless what is here already is none of them.
      const head = buf.slice(pos);
      if ('<!--'.startsWith(head.slice(0, 4)) || '<![CDATA['.startsWith(head) || '<!DOCTYPE'.startsWith(head)) return -1;
    }
    if (buf.startsWith('<!--', pos)) {
      const close = buf.indexOf('-->', pos + 4);
      if (close === -1) return this.need(pos, final);
      const body = buf.slice(pos + 4, close);
      if (body.includes('--') || body.endsWith('-')) this.fail('"--" in a comment', pos);
      return close + 3;
    }
    if (buf.startsWith('<![CDATA[', pos)) {
      const close = buf.indexOf(']]>', pos + 9);
      if (close === -1) return this.need(pos, final);
      if (this.open.length === 0) this.fail('a CDATA section outside the root element', pos);
      this.handler.text(normaliseLineEnds(buf.slice(pos + 9, close)));
      return close + 3;
    }
    if (buf.startsWith('<!DOCTYPE', pos)) {
      const gt = tagEnd(buf, pos + 9);
      if (gt === -1) return this.need(pos, final);
      if (this.rootSeen || this.doctypeSeen) this.fail('a DOCTYPE after the root element or a second one', pos);
      if (buf.slice(pos, gt).includes('[')) this.fail('a DOCTYPE with an internal subset (not supported for the DMR export)', pos);
      this.doctypeSeen = true;
      return gt + 1;
    }
    return this.fail('markup that is not a comment, CDATA section or DOCTYPE', pos);
  }

  /** `text` with its entity and character references replaced. */
  private decode(text: string, at: number): string {
    let out = '';
    let from = 0;
    let amp = text.indexOf('&');
    while (amp !== -1) {
      out += text.slice(from, amp);
      const semi = text.indexOf(';', amp + 1);
      const name = semi === -1 ? '' : text.slice(amp + 1, semi);
      const predefined = PREDEFINED[name];
      if (predefined !== undefined) out += predefined;
      else if (DECIMAL_REF.test(name) || HEX_REF.test(name)) {
        const code = name.charCodeAt(1) === 0x78 ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
        if (!isXmlChar(code)) this.fail(`a character reference to a character XML does not allow (&${name};)`, at);
        out += String.fromCodePoint(code);
      } else this.fail(semi === -1 ? 'an "&" that starts no entity reference' : `an unknown entity &${name};`, at);
      from = semi + 1;
      amp = text.indexOf('&', from);
    }
    return out + text.slice(from);
  }
}

/** Line breaks in `text` between `from` and `to`. */
function countLines(text: string, from: number, to: number): number {
  let lines = 0;
  let at = text.indexOf('\n', from);
  while (at !== -1 && at < to) {
    lines += 1;
    at = text.indexOf('\n', at + 1);
  }
  return lines;
}

/** The index of the `>` closing a tag that starts before `from`, outside quoted values, or -1. */
function tagEnd(buf: string, from: number): number {
  const gt = buf.indexOf('>', from);
  if (gt === -1) return -1;
  const inner = buf.slice(from, gt);
  if (!inner.includes('"') && !inner.includes("'")) return gt;
  let quote = 0;
  for (let i = from; i < buf.length; i += 1) {
    const c = buf.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 0x22 || c === 0x27) quote = c;
    else if (c === 0x3e) return i;
  }
  return -1;
}

/** Where a run of text can be cut before its end is seen: not inside an entity reference, not between CR and LF. */
function safeTextEnd(buf: string, from: number, to: number): number {
  let end = to;
  const amp = buf.lastIndexOf('&', end - 1);
  if (amp >= from && buf.indexOf(';', amp) === -1) end = amp;
  if (end > from && buf.charCodeAt(end - 1) === 0x0d) end -= 1;
  return end;
}
