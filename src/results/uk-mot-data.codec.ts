import type { MotDocument, UkTest } from './result-documents.js';
import type { JsonSchema } from '../shared/json-schema.js';
import { writeComplex, type ResultCodec } from './result-codec.js';
import { child, childrenNamed, isNil, onlyChildren, simpleText, strings, XmlReadError } from './xml-read.js';
import { ARRAY_OF_ARRAY_OF_STRING, ARRAY_OF_STRING, arrayItem, optional, sequenceType, writeStrings } from './xsd.js';

/** UKMOTData: the UKMOT result (interface spec "UKMOTData", "UKTest"; compat-notes "Data shapes"). */

export const UKTEST_STRING_FIELDS = ['TestDate', 'ExpiryDate', 'Result', 'Odometer', 'TestNumber'] as const;
export const UKTEST_ARRAY_FIELDS = ['FailureReasons', 'Advisories'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** The members of an imported `mot`: the data, then the original's texts of it (MotDocument). */
const MOT_MEMBERS = ['Tests', 'taxDate', 'ExtendedInformation', 'Json', 'ExtendedInformationJson'];
/** The XML texts of the data, kept as the original sent them. */
const MOT_TEXTS = ['Json', 'ExtendedInformationJson'] as const;

function validateMot(mot: Record<string, unknown>): string | undefined {
  const extra = Object.keys(mot).filter((k) => !MOT_MEMBERS.includes(k));
  if (extra.length > 0) return `mot has unexpected field "${extra[0] ?? ''}" (expected ${MOT_MEMBERS.join(', ')})`;
  if (!Array.isArray(mot.Tests)) return 'mot.Tests must be an array';
  for (const [i, test] of mot.Tests.entries()) {
    if (!isObject(test)) return `mot.Tests[${i}] must be an object`;
    for (const f of UKTEST_STRING_FIELDS) {
      if (f in test && typeof test[f] !== 'string') return `mot.Tests[${i}].${f} must be a string`;
    }
    for (const f of UKTEST_ARRAY_FIELDS) {
      if (f in test && !isStringArray(test[f])) return `mot.Tests[${i}].${f} must be an array of strings`;
    }
  }
  if ('taxDate' in mot && typeof mot.taxDate !== 'string') return 'mot.taxDate must be a string';
  for (const f of MOT_TEXTS) {
    if (f in mot && typeof mot[f] !== 'string') return `mot.${f} must be a string`;
  }
  if ('ExtendedInformation' in mot) {
    const ext = mot.ExtendedInformation;
    if (!isObject(ext) || !Object.values(ext).every((v) => typeof v === 'string')) return 'mot.ExtendedInformation must be an object of string values';
  }
  return undefined;
}

/** The JSON body: what validateMot admits, with ExtendedInformation always present (jsonBody). */
const MOT_JSON_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['Tests', 'ExtendedInformation'],
  properties: {
    Tests: {
      type: 'array',
      description: 'MOT tests, newest first',
      items: {
        type: 'object',
        properties: {
          ...Object.fromEntries(UKTEST_STRING_FIELDS.map((f) => [f, { type: 'string' }])),
          ...Object.fromEntries(UKTEST_ARRAY_FIELDS.map((f) => [f, { type: 'array', items: { type: 'string' } }])),
        },
      },
    },
    taxDate: { type: 'string' },
    ExtendedInformation: { type: 'object', additionalProperties: { type: 'string' } },
  },
  additionalProperties: false,
};

export const ukMotDataCodec: ResultCodec<MotDocument> = {
  xmlName: 'UKMOTData',
  xsdType: 'tns:UKMOTData',
  schemaTypes: [
    sequenceType('UKMOTData', (w) => {
      w.empty('s:element', optional('Tests', 'tns:ArrayOfUKTest'));
      w.empty('s:element', optional('taxDate', 's:string'));
      w.empty('s:element', optional('Json', 's:string'));
      w.empty('s:element', optional('ExtendedInformation', 'tns:ArrayOfArrayOfString'));
      w.empty('s:element', optional('ExtendedInformationJson', 's:string'));
    }),
    sequenceType('ArrayOfUKTest', (w) => {
      w.empty('s:element', arrayItem('UKTest', 'tns:UKTest'));
    }),
    sequenceType('UKTest', (w) => {
      for (const f of UKTEST_STRING_FIELDS) w.empty('s:element', optional(f, 's:string'));
      for (const f of UKTEST_ARRAY_FIELDS) w.empty('s:element', optional(f, 'tns:ArrayOfString'));
    }),
    ARRAY_OF_STRING,
    ARRAY_OF_ARRAY_OF_STRING,
  ],
  jsonDescription: 'a JSON object with `Tests` (array of MOT tests, newest first), `ExtendedInformation` (object) and, when known, `taxDate`',
  importPayload: { field: 'mot', validate: validateMot },

  fromRecord: (record) => record as MotDocument,

  fromXml(root) {
    onlyChildren(root, ['Tests', 'taxDate', 'Json', 'ExtendedInformation', 'ExtendedInformationJson']);
    const tests = child(root, 'Tests');
    if (tests) onlyChildren(tests, ['UKTest']);
    const mot: { Tests: UkTest[]; taxDate?: string; ExtendedInformation?: Record<string, string> } = {
      Tests: (tests ? childrenNamed(tests, 'UKTest') : []).map((element) => {
        onlyChildren(element, [...UKTEST_STRING_FIELDS, ...UKTEST_ARRAY_FIELDS]);
        const test: UkTest = {};
        for (const f of UKTEST_STRING_FIELDS) {
          const c = child(element, f);
          if (c) test[f] = simpleText(c);
        }
        for (const f of UKTEST_ARRAY_FIELDS) {
          const c = child(element, f);
          if (c) test[f] = strings(c);
        }
        return test;
      }),
    };
    const taxDate = child(root, 'taxDate');
    if (taxDate) mot.taxDate = simpleText(taxDate);
    const extended = child(root, 'ExtendedInformation');
    if (extended) {
      onlyChildren(extended, ['ArrayOfString']);
      const pairs: Record<string, string> = {};
      for (const row of extended.children) {
        const [name, value, ...rest] = strings(row);
        if (name === undefined || value === undefined || rest.length > 0) throw new XmlReadError('ExtendedInformation has a row that is not a name and a value');
        pairs[name] = value;
      }
      mot.ExtendedInformation = pairs;
    }
    // The same data as text, kept as the original wrote it (its spacing, escapes, nulls): served
    // byte for byte, never made again from what was read above (issue 24).
    const texts: Pick<MotDocument, (typeof MOT_TEXTS)[number]> = {};
    for (const f of MOT_TEXTS) {
      const c = child(root, f);
      if (c && !isNil(c)) texts[f] = simpleText(c);
    }
    return { ...mot, ...texts };
  },

  isChargeable: () => true,

  jsonBody: (mot) => {
    // The XML form's texts (MOT_TEXTS) are left out: the JSON body is the data itself, in the record's order.
    const { Json: _json, ExtendedInformationJson: _extendedJson, ...data } = mot;
    return { ...data, Tests: data.Tests, ExtendedInformation: data.ExtendedInformation ?? {} };
  },

  jsonSchema: () => MOT_JSON_SCHEMA,

  writeXml(w, element, attributes, mot) {
    writeComplex(w, element, attributes, false, () => {
      if (mot.Tests.length === 0) w.empty('Tests');
      else {
        w.open('Tests');
        for (const test of mot.Tests) {
          w.open('UKTest');
          for (const f of UKTEST_STRING_FIELDS) {
            const v = test[f];
            if (v !== undefined) w.leaf(f, v);
          }
          for (const f of UKTEST_ARRAY_FIELDS) {
            const v = test[f];
            if (v !== undefined) writeStrings(w, f, v);
          }
          w.close();
        }
        w.close();
      }
      if (mot.taxDate !== undefined) w.leaf('taxDate', mot.taxDate);
      w.leaf('Json', mot.Json ?? JSON.stringify(mot.Tests));
      const extended = Object.entries(mot.ExtendedInformation ?? {});
      if (extended.length === 0) w.empty('ExtendedInformation');
      else {
        w.open('ExtendedInformation');
        for (const [k, v] of extended) writeStrings(w, 'ArrayOfString', [k, v]);
        w.close();
      }
      w.leaf('ExtendedInformationJson', mot.ExtendedInformationJson ?? JSON.stringify(mot.ExtendedInformation ?? {}));
    });
  },

  sample: () => ({
    Tests: [{ TestDate: 'string', ExpiryDate: 'string', Result: 'string', Odometer: 'string', TestNumber: 'string', FailureReasons: ['string'], Advisories: ['string'] }],
    taxDate: 'string',
    ExtendedInformation: { string: 'string' },
  }),
};
