import type { ResultCodec } from './result-codec.js';
import { isNil, simpleText } from './xml-read.js';

/**
 * `string`: the original's plain string return (CheckRecalledVIN, WheelSize). SOAP carries it as the
 * text of `{Op}Result`; GET/POST as `<string xmlns="...">` (the WSDL's global element `string`); JSON
 * as a JSON string. An empty text is no answer: it costs nothing.
 */
export const stringCodec: ResultCodec<string> = {
  xmlName: 'string',
  xsdType: 's:string',
  // A built-in type: nothing to declare.
  schemaTypes: [],
  jsonDescription: 'a JSON string (the answer text)',
  importPayload: {
    field: 'text',
    jsonType: 'string',
    validate: (payload) => (typeof payload === 'string' && payload.trim() !== '' ? undefined : '"text" must be a non-empty string'),
  },

  fromRecord: (record) => (typeof record === 'string' ? record : ''),

  fromXml: (root) => (isNil(root) ? '' : simpleText(root)),

  isChargeable: (text) => text !== '',

  jsonSchema: () => ({ type: 'string', description: 'The answer as plain text; empty when there is nothing to report' }),
  jsonBody: (text) => text,

  writeXml(w, element, attributes, text) {
    if (text === '') w.empty(element, attributes);
    else w.leaf(element, text, attributes);
  },

  sample: () => 'string',
};
