import type { Attributes, XmlWriter } from '../xml/xml-writer.js';
import type { SchemaType } from './result-codec.js';

/**
 * Element declarations as ASMX writes them in a WSDL schema (compat-notes "WSDL (as ASMX generates
 * it)"): attributes in the order minOccurs, maxOccurs, name, nillable, type.
 */

export const optional = (name: string, type: string): Attributes => [
  ['minOccurs', '0'],
  ['maxOccurs', '1'],
  ['name', name],
  ['type', type],
];

/** Value types (int, boolean, dateTime, double...) are required in ASMX schemas. */
export const required = (name: string, type: string): Attributes => [
  ['minOccurs', '1'],
  ['maxOccurs', '1'],
  ['name', name],
  ['type', type],
];

export const arrayItem = (name: string, type: string): Attributes => [
  ['minOccurs', '0'],
  ['maxOccurs', 'unbounded'],
  ['name', name],
  ['nillable', 'true'],
  ['type', type],
];

/** `<s:complexType name><s:sequence>...</s:sequence></s:complexType>`. */
export function sequenceType(name: string, write: (w: XmlWriter) => void): SchemaType {
  return {
    name,
    write(w) {
      w.open('s:complexType', [['name', name]]).open('s:sequence');
      write(w);
      w.close().close();
    },
  };
}

/** ArrayOfString: shared by UKMOTData (and, later, DataGrid). */
export const ARRAY_OF_STRING = sequenceType('ArrayOfString', (w) => {
  w.empty('s:element', arrayItem('string', 's:string'));
});

/** ArrayOfArrayOfString: rows of ArrayOfString. */
export const ARRAY_OF_ARRAY_OF_STRING = sequenceType('ArrayOfArrayOfString', (w) => {
  w.empty('s:element', arrayItem('ArrayOfString', 'tns:ArrayOfString'));
});

/** Writes `values` as ArrayOfString content: `<name><string>..</string>...</name>`, `<name />` when empty. */
export function writeStrings(w: XmlWriter, name: string, values: readonly string[]): void {
  if (values.length === 0) {
    w.empty(name);
    return;
  }
  w.open(name);
  for (const v of values) w.leaf('string', v);
  w.close();
}
