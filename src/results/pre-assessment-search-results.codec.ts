import type { NcapRating } from './result-documents.js';
import type { JsonSchema } from '../shared/json-schema.js';
import { writeComplex, type ResultCodec } from './result-codec.js';
import { childrenNamed, onlyChildren, simpleFields } from './xml-read.js';
import { arrayItem, optional, required, sequenceType } from './xsd.js';

/**
 * ArrayOfPreAssessmentSearchResult: the Euro NCAP ratings CheckEuroNCap finds (interface spec
 * "PreAssessmentSearchResult"). An empty list is a valid answer and costs nothing.
 */

const NCAP_INT_FIELDS = [
  'AdultOccupantStars', 'ChildOccupantStars', 'PedestrianStars', 'Id', 'ClassId', 'ProtocolId', 'MakeId',
  'ModelId', 'SortOrder', 'LifecycleStatus', 'Year',
] as const;
const NCAP_BOOL_FIELDS = [
  'AdultOccupantStrikeThrough', 'ChildOccupantStrikeThrough', 'PedestrianStrikeThrough', 'IsPublished', 'IsPreProtocol', 'IsFleet',
] as const;
const NCAP_STRING_FIELDS = [
  'Title', 'Name', 'Make', 'Model', 'Content', 'Url', 'ClassEN', 'ClassDE', 'ClassNL', 'ClassES', 'ClassFR', 'ClassIT',
  'ClassRU', 'ClassSV', 'ClassTR', 'ClassZH', 'MakeImageLarge', 'MakeImageSmall', 'Images', 'YoutubeVideos', 'YoukuVideos',
] as const;
const NCAP_DATE_FIELDS = ['CreateDate', 'ReleaseDate', 'FirstPublished'] as const;
/** Every PreAssessmentSearchResult field by value type, for import validation and the rating file importer. */
export const NCAP_FIELDS = { ints: NCAP_INT_FIELDS, bools: NCAP_BOOL_FIELDS, strings: NCAP_STRING_FIELDS, dates: NCAP_DATE_FIELDS };

export type NcapFieldType = 'int' | 'boolean' | 'string' | 'dateTime';

const int = (name: string) => ({ name, type: 'int' as const });
const boolean = (name: string) => ({ name, type: 'boolean' as const });
const string = (name: string) => ({ name, type: 'string' as const });
const dateTime = (name: string) => ({ name, type: 'dateTime' as const });

/**
 * PreAssessmentSearchResult in the order of the vendor's own WSDL (compat-notes "Wire differences"
 * 1: zeep built from it refuses any other order); value types are required (minOccurs 1).
 */
export const NCAP_FIELD_ORDER: ReadonlyArray<{ readonly name: string; readonly type: NcapFieldType }> = [
  int('AdultOccupantStars'),
  boolean('AdultOccupantStrikeThrough'),
  int('ChildOccupantStars'),
  boolean('ChildOccupantStrikeThrough'),
  int('PedestrianStars'),
  boolean('PedestrianStrikeThrough'),
  int('Id'),
  ...['Title', 'Name', 'Make', 'Model', 'Content', 'Url'].map(string),
  int('Year'),
  ...['ClassEN', 'ClassDE', 'ClassNL', 'ClassES', 'ClassFR', 'ClassIT', 'ClassRU', 'ClassSV', 'ClassTR', 'ClassZH'].map(string),
  int('ClassId'),
  string('MakeImageLarge'),
  string('MakeImageSmall'),
  int('ProtocolId'),
  int('MakeId'),
  int('ModelId'),
  boolean('IsPublished'),
  dateTime('CreateDate'),
  dateTime('ReleaseDate'),
  ...['Images', 'YoutubeVideos', 'YoukuVideos'].map(string),
  boolean('IsPreProtocol'),
  boolean('IsFleet'),
  int('SortOrder'),
  int('LifecycleStatus'),
  dateTime('FirstPublished'),
];

// The import validator and the schema must name the same fields, with the same types.
{
  const byType: Record<NcapFieldType, readonly string[]> = { int: NCAP_INT_FIELDS, boolean: NCAP_BOOL_FIELDS, string: NCAP_STRING_FIELDS, dateTime: NCAP_DATE_FIELDS };
  const validated = Object.entries(byType).flatMap(([type, names]) => names.map((name) => `${name}:${type}`));
  const declared = new Set(NCAP_FIELD_ORDER.map((f) => `${f.name}:${f.type}`));
  if (validated.length !== declared.size || validated.some((f) => !declared.has(f))) {
    throw new Error('PreAssessmentSearchResult: the validated fields and the schema differ');
  }
}

/** .NET's default values, written for required value fields the record does not carry. */
const NCAP_DEFAULTS: Readonly<Record<Exclude<NcapFieldType, 'string'>, string>> = {
  int: '0',
  boolean: 'false',
  dateTime: '0001-01-01T00:00:00',
};

/** ISO 8601 date-time as .NET writes xs:dateTime ("2017-05-31T00:00:00", optional fraction and zone). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

function validateRating(ncap: Record<string, unknown>): string | undefined {
  for (const f of ['Make', 'Model'] as const) {
    if (typeof ncap[f] !== 'string' || ncap[f].trim() === '') return `ncap.${f} is required and must be a non-empty string`;
  }
  for (const f of NCAP_INT_FIELDS) {
    if (f in ncap && !(Number.isInteger(ncap[f]) && Math.abs(ncap[f] as number) <= 2147483647)) return `ncap.${f} must be a whole number`;
  }
  for (const f of NCAP_BOOL_FIELDS) {
    if (f in ncap && typeof ncap[f] !== 'boolean') return `ncap.${f} must be true or false`;
  }
  for (const f of NCAP_STRING_FIELDS) {
    if (f in ncap && ncap[f] !== null && typeof ncap[f] !== 'string') return `ncap.${f} must be a string`;
  }
  for (const f of NCAP_DATE_FIELDS) {
    const v = ncap[f];
    if (f in ncap && !(typeof v === 'string' && DATE_TIME.test(v))) return `ncap.${f} must be an ISO 8601 date-time such as 2017-05-31T00:00:00`;
  }
  return undefined;
}

/** Each field's JSON type as validateRating admits it (strings may be null). */
const NCAP_JSON_TYPES: Readonly<Record<NcapFieldType, JsonSchema>> = {
  int: { type: 'integer', minimum: -2147483648, maximum: 2147483647 },
  boolean: { type: 'boolean' },
  string: { type: ['string', 'null'] },
  dateTime: { type: 'string', pattern: DATE_TIME.source },
};

/** The JSON body: the stored ratings as imported (validateRating), Make and Model always present. */
const NCAP_JSON_SCHEMA: JsonSchema = {
  type: 'array',
  description: 'Euro NCAP ratings (PreAssessmentSearchResult); an empty list costs nothing',
  items: {
    type: 'object',
    required: ['Make', 'Model'],
    properties: Object.fromEntries(
      NCAP_FIELD_ORDER.map((f) => [f.name, f.name === 'Make' || f.name === 'Model' ? { type: 'string', minLength: 1 } : NCAP_JSON_TYPES[f.type]]),
    ),
  },
};

export const preAssessmentSearchResultsCodec: ResultCodec<readonly NcapRating[]> = {
  xmlName: 'ArrayOfPreAssessmentSearchResult',
  xsdType: 'tns:ArrayOfPreAssessmentSearchResult',
  schemaTypes: [
    sequenceType('ArrayOfPreAssessmentSearchResult', (w) => {
      w.empty('s:element', arrayItem('PreAssessmentSearchResult', 'tns:PreAssessmentSearchResult'));
    }),
    sequenceType('PreAssessmentSearchResult', (w) => {
      for (const f of NCAP_FIELD_ORDER) {
        w.empty('s:element', f.type === 'string' ? optional(f.name, 's:string') : required(f.name, `s:${f.type}`));
      }
    }),
  ],
  jsonDescription: 'a JSON array of Euro NCAP ratings (PreAssessmentSearchResult), possibly empty',
  importPayload: { field: 'ncap', validate: validateRating },

  fromRecord: (record) => record as NcapRating[],

  // "An empty list costs nothing" (catalogue, CheckEuroNCap): decided here and nowhere else.
  fromXml(root) {
    onlyChildren(root, ['PreAssessmentSearchResult']);
    return childrenNamed(root, 'PreAssessmentSearchResult').map((rating) => simpleFields(rating, NCAP_FIELD_ORDER));
  },

  isChargeable: (ratings) => ratings.length > 0,

  // A search that finds nothing is the empty list (free), not a "Lookup failed" fault.
  recordWhenAbsent: () => [],

  jsonBody: (ratings) => ratings,

  jsonSchema: () => NCAP_JSON_SCHEMA,

  writeXml(w, element, attributes, ratings) {
    writeComplex(w, element, attributes, ratings.length === 0, () => {
      for (const rating of ratings) {
        w.open('PreAssessmentSearchResult');
        for (const field of NCAP_FIELD_ORDER) {
          const v = rating[field.name];
          if (field.type === 'string') {
            if (typeof v === 'string') w.leaf(field.name, v);
            continue;
          }
          const given = field.type === 'int' ? (typeof v === 'number' && Number.isInteger(v) ? String(v) : undefined)
            : field.type === 'boolean' ? (typeof v === 'boolean' ? String(v) : undefined)
            : typeof v === 'string' ? v : undefined;
          w.leaf(field.name, given ?? NCAP_DEFAULTS[field.type]);
        }
        w.close();
      }
    });
  },

  sample: () => [Object.fromEntries(NCAP_FIELD_ORDER.filter((f) => f.type === 'string').map((f) => [f.name, 'string']))],
};
