import type { XmlWriter } from '../xml/xml-writer.js';
import { writeComplex, type ResultCodec, type SchemaType } from './result-codec.js';
import type { JsonSchema } from '../shared/json-schema.js';
import { simpleFields } from './xml-read.js';
import { optional, required, sequenceType } from './xsd.js';

/**
 * The record types of the original that are a flat sequence of simple values (Valuation,
 * InsuredStatus, InsuranceDetails, Insurance, IrishTaxi, LondonTaxi, NameValue): one field list
 * gives the WSDL type, the XML content, the JSON body and the import validation, in the vendor
 * WSDL's element order (compat-notes "The original's whole contract").
 */

/** XML Schema types of a flat field. Value types (all but `string`) are required in ASMX schemas. */
export type FlatFieldType = 'string' | 'double' | 'boolean' | 'dateTime';

export interface FlatField {
  readonly name: string;
  readonly type: FlatFieldType;
}

/** A stored flat record: strings, numbers and booleans by field name. */
export type FlatRecord = Readonly<Record<string, string | number | boolean>>;

export const text = (name: string): FlatField => ({ name, type: 'string' });
export const double = (name: string): FlatField => ({ name, type: 'double' });
export const boolean = (name: string): FlatField => ({ name, type: 'boolean' });
export const dateTime = (name: string): FlatField => ({ name, type: 'dateTime' });

/** ISO 8601 date-time as .NET writes xs:dateTime ("2027-03-14T00:00:00", optional fraction and zone). */
export const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/** .NET's default values, written for a required value field a record lacks (an upstream's partial answer). */
const DEFAULTS: Readonly<Record<Exclude<FlatFieldType, 'string'>, string>> = {
  double: '0',
  boolean: 'false',
  dateTime: '0001-01-01T00:00:00',
};

/** The complex type `name`: strings optional, value types required (minOccurs 1), as ASMX declares them. */
export function flatSchemaType(name: string, fields: readonly FlatField[]): SchemaType {
  return sequenceType(name, (w) => {
    for (const f of fields) w.empty('s:element', f.type === 'string' ? optional(f.name, 's:string') : required(f.name, `s:${f.type}`));
  });
}

/** The lexical form of a value field, or undefined when the record's value does not fit the type. */
function lexical(field: FlatField, value: unknown): string | undefined {
  switch (field.type) {
    case 'string':
      return typeof value === 'string' ? value : undefined;
    case 'double':
      // String(n) is an xs:double lexical form ("1e+21" included); NaN and Infinity are not stored.
      return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
    case 'boolean':
      return typeof value === 'boolean' ? String(value) : undefined;
    case 'dateTime':
      return typeof value === 'string' && DATE_TIME.test(value) ? value : undefined;
  }
}

/** The children of a flat record: strings only when present, value types always (default when absent). */
export function writeFlatFields(w: XmlWriter, fields: readonly FlatField[], record: FlatRecord): void {
  for (const f of fields) {
    const v = lexical(f, record[f.name]);
    if (f.type === 'string') {
      if (v !== undefined) w.leaf(f.name, v);
    } else w.leaf(f.name, v ?? DEFAULTS[f.type]);
  }
}

/** `<element>` holding a flat record's fields. */
export function writeFlatRecord(w: XmlWriter, element: string, attributes: ReadonlyArray<readonly [string, string]>, fields: readonly FlatField[], record: FlatRecord): void {
  writeComplex(w, element, attributes, false, () => {
    writeFlatFields(w, fields, record);
  });
}

/** The record's known fields in schema order (the JSON body): unknown members are not served. */
export function pickFields(fields: readonly FlatField[], record: FlatRecord): FlatRecord {
  const out: Record<string, string | number | boolean> = {};
  for (const f of fields) {
    const v = record[f.name];
    if (v !== undefined) out[f.name] = v;
  }
  return out;
}

const DESCRIBE: Readonly<Record<FlatFieldType, string>> = {
  string: 'a string',
  double: 'a number',
  boolean: 'true or false',
  dateTime: 'an ISO 8601 date-time such as 2027-03-14T00:00:00',
};

/**
 * Why `payload` (the import member `member`) is not a valid record of `fields`, or undefined.
 * Value-typed fields are required: a record of ours never makes the wire carry .NET's defaults.
 */
export function validateFlat(member: string, fields: readonly FlatField[], payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return `"${member}" must be a JSON object`;
  const record = payload as Record<string, unknown>;
  const known = new Set(fields.map((f) => f.name));
  const extra = Object.keys(record).filter((k) => !known.has(k));
  if (extra.length > 0) return `${member} has unexpected field "${extra[0] ?? ''}" (expected ${fields.map((f) => f.name).join(', ')})`;
  for (const f of fields) {
    const v = record[f.name];
    if (v === undefined) {
      if (f.type !== 'string') return `${member}.${f.name} is required and must be ${DESCRIBE[f.type]}`;
      continue;
    }
    if (lexical(f, v) === undefined) return `${member}.${f.name} must be ${DESCRIBE[f.type]}`;
  }
  return undefined;
}

/** A help-page sample of a flat record: "string" and the type's example value. */
export function flatSample(fields: readonly FlatField[]): FlatRecord {
  const example: Readonly<Record<FlatFieldType, string | number | boolean>> = { string: 'string', double: 0, boolean: false, dateTime: '0001-01-01T00:00:00' };
  return Object.fromEntries(fields.map((f) => [f.name, example[f.type]]));
}

/** What differs between the flat result types: the codec of each is made from this. */
export interface FlatCodecSpec {
  /** The complex type, the GET/POST root and the WSDL's global element (`Valuation`). */
  readonly typeName: string;
  readonly fields: readonly FlatField[];
  /** The member of an import line that holds the record. */
  readonly importField: string;
  readonly jsonDescription: string;
}

/** JSON types of a flat field, as jsonBody carries it (the stored value). */
const JSON_FIELD_SCHEMAS: Readonly<Record<FlatFieldType, JsonSchema>> = {
  string: { type: 'string' },
  double: { type: 'number' },
  boolean: { type: 'boolean' },
  dateTime: { type: 'string', description: 'ISO 8601 date and time, as xs:dateTime' },
};

/** The JSON Schema of a flat record's body: its fields, each optional (a record may lack one). */
export function flatJsonSchema(typeName: string, fields: readonly FlatField[]): JsonSchema {
  return {
    title: typeName,
    type: 'object',
    properties: Object.fromEntries(fields.map((f) => [f.name, JSON_FIELD_SCHEMAS[f.type]])),
  };
}

/** The codec of a flat record type: every successful answer is chargeable (a record was found). */
export function flatRecordCodec(spec: FlatCodecSpec): ResultCodec<FlatRecord> {
  const { typeName, fields, importField } = spec;
  return {
    xmlName: typeName,
    xsdType: `tns:${typeName}`,
    schemaTypes: [flatSchemaType(typeName, fields)],
    jsonDescription: spec.jsonDescription,
    importPayload: { field: importField, validate: (payload) => validateFlat(importField, fields, payload) },
    fromRecord: (record) => pickFields(fields, record as FlatRecord),
    fromXml: (root) => simpleFields(root, fields),
    isChargeable: () => true,
    jsonBody: (value) => value,
    jsonSchema: () => flatJsonSchema(typeName, fields),
    writeXml(w, element, attributes, value) {
      writeFlatRecord(w, element, attributes, fields, value);
    },
    sample: () => flatSample(fields),
  };
}
