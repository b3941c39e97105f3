import { writeComplex, type ResultCodec } from './result-codec.js';
import { flatJsonSchema, flatSchemaType, pickFields, text, validateFlat, writeFlatFields, type FlatField, type FlatRecord } from './flat-record.js';
import { childrenNamed, onlyChildren, simpleFields } from './xml-read.js';
import { arrayItem, sequenceType } from './xsd.js';

/**
 * ArrayOfNameValue: what CheckStolen answers for a VIN (vendor WSDL "ArrayOfNameValue", "NameValue"):
 * the details of a theft report as name/value pairs, in the order the record gives them.
 *
 * A stolen-vehicle register lists only stolen vehicles, so a VIN it does not list is answered with
 * the empty list ("not reported stolen") rather than a not-found fault (`recordWhenAbsent`). Like an
 * empty Euro NCAP search, the empty list is the absence of data and costs nothing; a non-empty list
 * (a report) is charged. An upstream that cannot answer still fails: "unavailable" never reads as
 * "not stolen" (lookup-pipeline.ts askProviders).
 */

export const NAME_VALUE_FIELDS: readonly FlatField[] = [text('Name'), text('Value')];

function validateNameValues(payload: unknown): string | undefined {
  if (!Array.isArray(payload)) return '"nameValues" must be a JSON array of {"Name", "Value"} objects';
  for (const [i, pair] of payload.entries()) {
    const problem = validateFlat(`nameValues[${i}]`, NAME_VALUE_FIELDS, pair);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

export const arrayOfNameValueCodec: ResultCodec<readonly FlatRecord[]> = {
  xmlName: 'ArrayOfNameValue',
  xsdType: 'tns:ArrayOfNameValue',
  schemaTypes: [
    sequenceType('ArrayOfNameValue', (w) => {
      w.empty('s:element', arrayItem('NameValue', 'tns:NameValue'));
    }),
    flatSchemaType('NameValue', NAME_VALUE_FIELDS),
  ],
  jsonDescription: 'a JSON array of `{"Name", "Value"}` objects; for CheckStolen the details of a theft report, empty when the VIN is not reported stolen',
  importPayload: { field: 'nameValues', jsonType: 'array', validate: validateNameValues },

  fromRecord: (record) => (record as FlatRecord[]).map((pair) => pickFields(NAME_VALUE_FIELDS, pair)),

  fromXml(root) {
    onlyChildren(root, ['NameValue']);
    return childrenNamed(root, 'NameValue').map((pair) => simpleFields(pair, NAME_VALUE_FIELDS));
  },

  isChargeable: (pairs) => pairs.length > 0,

  recordWhenAbsent: () => [],

  jsonBody: (pairs) => pairs,
  jsonSchema: () => ({ type: 'array', items: flatJsonSchema('NameValue', NAME_VALUE_FIELDS) }),

  writeXml(w, element, attributes, pairs) {
    writeComplex(w, element, attributes, pairs.length === 0, () => {
      for (const pair of pairs) {
        w.open('NameValue');
        writeFlatFields(w, NAME_VALUE_FIELDS, pair);
        w.close();
      }
    });
  },

  sample: () => [{ Name: 'string', Value: 'string' }],
};
