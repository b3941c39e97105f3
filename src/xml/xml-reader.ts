import { SaxesParser, type SaxesTagNS } from 'saxes';
import { DocumentShapes } from './document-shapes.js';
import { fastReadXml, type ReadDetails } from './fast-xml-reader.js';

/** One element of a parsed request document. Attributes and children are plain arrays: no maps
 * keyed by client-chosen names, so no prototype can be polluted by `__proto__` elements. */
export interface XmlElement {
  readonly uri: string;
  readonly local: string;
  readonly attributes: ReadonlyArray<{ readonly uri: string; readonly local: string; readonly value: string }>;
  readonly children: XmlElement[];
  /** Concatenated character data directly inside this element. */
  text: string;
}

export interface XmlLimits {
  /** Deepest element nesting accepted. */
  readonly maxDepth: number;
  /** Most elements in one document. */
  readonly maxElements: number;
}

export const DEFAULT_XML_LIMITS: XmlLimits = { maxDepth: 32, maxElements: 10_000 };

/** Why a document was refused; the message is safe to show to the client. */
export class XmlReadError extends Error {
  override readonly name = 'XmlReadError';
}

/** The shapes of the documents this process has read (document-shapes.ts). */
const shapes = new DocumentShapes();

/**
 * Parses untrusted XML into a tree, namespace-aware. Refuses any DOCTYPE (so no DTD, no external
 * or internal entities: only the five XML entities and numeric references are decoded), processing
 * instructions other than the declaration, excessive depth or size.
 *
 * A document of a shape read before is built from that shape (document-shapes.ts); any other the
 * fast reader reads when it can, and saxes otherwise. All three build the same tree.
 */
export function readXml(text: string, limits: XmlLimits = DEFAULT_XML_LIMITS): XmlElement {
  const known = shapes.read(text, limits);
  if (known) return known;
  const details: ReadDetails = { leaves: [], elements: 0, depth: 0 };
  const fast = fastReadXml(text, limits, details);
  if (!fast) return readXmlWithSaxes(text, limits);
  shapes.learn(text, fast, details);
  return fast;
}

/** The full parser: saxes, strict and namespace-aware. It decides every document the fast path defers. */
export function readXmlWithSaxes(text: string, limits: XmlLimits = DEFAULT_XML_LIMITS): XmlElement {
  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let count = 0;
  let failure: XmlReadError | undefined;
  const stop = (message: string): never => {
    failure ??= new XmlReadError(message);
    throw failure;
  };

  parser.on('doctype', () => stop('DTDs are not allowed in requests'));
  parser.on('processinginstruction', (pi) => stop(`processing instruction <?${pi.target}?> is not allowed`));
  parser.on('opentag', (tag: SaxesTagNS) => {
    count += 1;
    if (count > limits.maxElements) stop(`the document has more than ${limits.maxElements} elements`);
    if (stack.length >= limits.maxDepth) stop(`elements are nested deeper than ${limits.maxDepth} levels`);
    const element: XmlElement = {
      uri: tag.uri,
      local: tag.local,
      attributes: Object.values(tag.attributes).map((a) => ({ uri: a.uri, local: a.local, value: a.value })),
      children: [],
      text: '',
    };
    const parent = stack.at(-1);
    if (parent) parent.children.push(element);
    else root = element;
    stack.push(element);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  const onText = (t: string): void => {
    const current = stack.at(-1);
    if (current) current.text += t;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('error', (error: Error) => {
    failure ??= new XmlReadError(`malformed XML: ${error.message}`);
    throw failure;
  });

  try {
    parser.write(text).close();
  } catch (error) {
    if (failure) throw failure;
    throw new XmlReadError(`malformed XML: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!root) throw new XmlReadError('the request has no root element');
  return root;
}

/** `xsi:nil="true"` on an element. */
export function isNil(element: XmlElement): boolean {
  return element.attributes.some((a) => a.uri === 'http://www.w3.org/2001/XMLSchema-instance' && a.local === 'nil' && a.value.trim() === 'true');
}
