import { isNil, XmlReadError, type XmlElement } from '../xml/xml-reader.js';

/**
 * Helpers of the codecs' readers (`ResultCodec.fromXml`): the original's GET/POST answer, parsed
 * by the project's XML reader (namespace-aware, no DTD, depth and size limits), read back into the
 * record the codec writes. Children are matched by local name in the namespace of the element that
 * holds them (the answer's default namespace, the service's), so an element of another namespace
 * is not taken for one of ours. Every message is ours: no text of the answer is quoted.
 */

export { isNil, XmlReadError, type XmlElement };

/** The children of `parent` in its own namespace. */
export function ownChildren(parent: XmlElement): XmlElement[] {
  return parent.children.filter((c) => c.uri === parent.uri);
}

/** The one child named `local`, or undefined; twice is not a record of ours. */
export function child(parent: XmlElement, local: string): XmlElement | undefined {
  let found: XmlElement | undefined;
  for (const c of parent.children) {
    if (c.uri !== parent.uri || c.local !== local) continue;
    if (found) throw new XmlReadError(`${parent.local} holds ${local} twice`);
    found = c;
  }
  return found;
}

/** The children named `local` (an array's items). */
export function childrenNamed(parent: XmlElement, local: string): XmlElement[] {
  return parent.children.filter((c) => c.uri === parent.uri && c.local === local);
}

/** Refuses a child the type does not have: the answer is then not of this type. */
export function onlyChildren(parent: XmlElement, names: readonly string[]): void {
  for (const c of parent.children) {
    if (c.uri !== parent.uri || !names.includes(c.local)) throw new XmlReadError(`${parent.local} has an unexpected element ${c.local}`);
  }
}

/** An element of simple content: its text, refusing element children. */
export function simpleText(element: XmlElement): string {
  if (element.children.length > 0) throw new XmlReadError(`${element.local} should hold text, not elements`);
  return element.text;
}

/** An `ArrayOfString`-shaped element: the texts of its `string` items, in order. */
export function strings(element: XmlElement): string[] {
  onlyChildren(element, ['string']);
  return element.children.map(simpleText);
}

/** Simple XML Schema types the original's records use. */
export type SimpleType = 'string' | 'double' | 'int' | 'boolean' | 'dateTime';

const XS_DOUBLE = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const XS_INT = /^[+-]?\d{1,10}$/;
/** ISO 8601 date-time as .NET writes xs:dateTime ("2027-03-14T00:00:00", optional fraction and zone). */
const XS_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * The value of a simple element as a record holds it: text for strings and date-times, a number
 * for double and int, true/false for boolean (xs:boolean's `1`/`0` too). A text that is not of
 * its type makes the answer unreadable.
 */
export function simpleValue(element: XmlElement, type: SimpleType): string | number | boolean {
  const text = simpleText(element);
  if (type === 'string') return text;
  const value = text.trim();
  switch (type) {
    case 'double':
      if (XS_DOUBLE.test(value) && Number.isFinite(Number(value))) return Number(value);
      break;
    case 'int':
      if (XS_INT.test(value) && Math.abs(Number(value)) <= 2147483647) return Number(value);
      break;
    case 'boolean':
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      break;
    case 'dateTime':
      if (XS_DATE_TIME.test(value)) return value;
      break;
  }
  throw new XmlReadError(`${element.local} is not an xs:${type}`);
}

/**
 * A sequence of simple fields (a flat record): the fields present, by name; an `xsi:nil` or absent
 * one is left out, an element the type does not have refused.
 */
export function simpleFields(element: XmlElement, fields: ReadonlyArray<{ readonly name: string; readonly type: SimpleType }>): Record<string, string | number | boolean> {
  onlyChildren(element, fields.map((f) => f.name));
  const record: Record<string, string | number | boolean> = {};
  for (const f of fields) {
    const c = child(element, f.name);
    if (c && !isNil(c)) record[f.name] = simpleValue(c, f.type);
  }
  return record;
}
