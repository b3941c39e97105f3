import type { ReadDetails } from './fast-xml-reader.js';
import type { XmlElement, XmlLimits } from './xml-reader.js';

/**
 * Shapes of documents read before: a document's text cut at the content of its leaf elements. A
 * client library sends every call of one operation with the same envelope, namespaces, parameter
 * elements and white space; only the parameter values change. A document that matches a shape
 * character for character outside those values, and whose values are plain character data, has
 * the same tree as the document the shape was learnt from with the new values, so it is built
 * without reading it again.
 *
 * Why: reading the request envelope was a tenth of a SOAP lookup's CPU (bench:soap profile), and
 * nearly all of it went on the envelope, namespace declarations and tags that every request of a
 * client repeats.
 *
 * Exactness: a shape is learnt only from a document the fast reader accepted (fast-xml-reader.ts,
 * which defers anything saxes might read differently); its fixed parts are compared exactly; a
 * value is accepted only when the fast reader would take it as it stands (no reference, no
 * markup, no character it checks or changes), so it ends at the next `<`, which must start the
 * leaf's own end tag. test/unit/document-shapes.test.ts compares the result with saxes.
 */

/** One element of a shape: fixed, or a leaf whose text is the value at `slot`. */
interface ShapeNode {
  readonly uri: string;
  readonly local: string;
  readonly attributes: XmlElement['attributes'];
  readonly children: readonly ShapeNode[];
  /** The element's text when it is not a slot. */
  readonly text: string;
  /** Index of its value among the shape's slots; -1 for a fixed element. */
  readonly slot: number;
}

interface Shape {
  /** The fixed text around the slots: one more than there are slots. */
  readonly fixed: readonly string[];
  /** The last fixed part, checked first: it holds the operation's end tag, so other shapes fail fast. */
  readonly tail: string;
  readonly root: ShapeNode;
  readonly elements: number;
  readonly depth: number;
}

/** Shapes kept: a few client libraries times the operations they call. */
const DEFAULT_CAPACITY = 32;
/** Longer documents are read in full each time (requests are a few hundred bytes). */
const MAX_SHAPE_LENGTH = 8192;

/** True when the fast reader takes text[start, end) as it is (its "plain" test), with no `<`. */
function plainValueEnd(text: string, start: number): number {
  const length = text.length;
  for (let at = start; at < length; at++) {
    const c = text.charCodeAt(at);
    if (c === 0x3c /* < */) return at;
    if (c < 0x20 || c >= 0xd800 || c === 0x26 /* & */ || c === 0x5d /* ] */) return -1;
  }
  return -1;
}

function freezeAttributes(attributes: XmlElement['attributes']): XmlElement['attributes'] {
  return Object.isFrozen(attributes) ? attributes : Object.freeze(attributes.map((a) => Object.freeze({ ...a })));
}

export class DocumentShapes {
  /** Most recently used first. */
  private shapes: Shape[] = [];

  constructor(
    private readonly capacity = DEFAULT_CAPACITY,
    private readonly maxLength = MAX_SHAPE_LENGTH,
  ) {}

  /** The tree of `text` when it matches a known shape within `limits`; undefined otherwise. */
  read(text: string, limits: XmlLimits): XmlElement | undefined {
    const shapes = this.shapes;
    for (let i = 0; i < shapes.length; i++) {
      const shape = shapes[i] as Shape;
      const values = this.match(shape, text);
      if (values === undefined) continue;
      if (shape.elements > limits.maxElements || shape.depth > limits.maxDepth) return undefined;
      if (i > 0) {
        shapes.splice(i, 1);
        shapes.unshift(shape);
      }
      return build(shape.root, values);
    }
    return undefined;
  }

  /** Keeps the shape of a document the fast reader accepted with these details. */
  learn(text: string, root: XmlElement, details: ReadDetails): void {
    if (text.length > this.maxLength || details.leaves.length === 0) return;
    const fixed: string[] = [];
    const slotOf = new Map<XmlElement, number>();
    let from = 0;
    details.leaves.forEach((leaf, i) => {
      fixed.push(text.slice(from, leaf.start));
      slotOf.set(leaf.element, i);
      from = leaf.end;
    });
    fixed.push(text.slice(from));
    const shape: Shape = {
      fixed,
      tail: fixed[fixed.length - 1] ?? '',
      root: toNode(root, slotOf),
      elements: details.elements,
      depth: details.depth,
    };
    // A document of a known shape is never learnt twice (read() would have matched it), but two
    // documents can race to learn the same shape: keep one.
    if (this.shapes.some((known) => sameFixed(known.fixed, fixed))) return;
    this.shapes.unshift(shape);
    if (this.shapes.length > this.capacity) this.shapes.length = this.capacity;
  }

  /** How many shapes are kept (for tests). */
  get size(): number {
    return this.shapes.length;
  }

  /** The slot values of `text` in `shape`, or undefined when it does not match. */
  private match(shape: Shape, text: string): string[] | undefined {
    if (text.slice(text.length - shape.tail.length) !== shape.tail) return undefined;
    const fixed = shape.fixed;
    const last = fixed.length - 1;
    const values: string[] = [];
    let pos = 0;
    for (let i = 0; i < last; i++) {
      const part = fixed[i] as string;
      // A slice compared whole: V8 compares flat strings natively, several times faster than
      // startsWith(part, pos) or a loop over the characters.
      if (text.slice(pos, pos + part.length) !== part) return undefined;
      pos += part.length;
      const end = plainValueEnd(text, pos);
      if (end < 0) return undefined;
      values.push(text.slice(pos, end));
      pos = end;
    }
    // The tail was matched at the end; it must also start exactly where the last value ended.
    return pos + shape.tail.length === text.length ? values : undefined;
  }
}

function sameFixed(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}

function toNode(element: XmlElement, slotOf: ReadonlyMap<XmlElement, number>): ShapeNode {
  return {
    uri: element.uri,
    local: element.local,
    attributes: freezeAttributes(element.attributes),
    children: element.children.map((child) => toNode(child, slotOf)),
    text: element.text,
    slot: slotOf.get(element) ?? -1,
  };
}

/** A fresh tree of the shape with these values: callers may change it as they could a parsed one. */
function build(node: ShapeNode, values: readonly string[]): XmlElement {
  const children: XmlElement[] = [];
  for (const child of node.children) children.push(build(child, values));
  return {
    uri: node.uri,
    local: node.local,
    attributes: node.attributes,
    children,
    text: node.slot < 0 ? node.text : (values[node.slot] as string),
  };
}
