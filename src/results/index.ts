import type { MotDocument, NcapRating } from './result-documents.js';
import type { XmlElement } from '../xml/xml-reader.js';
import { arrayOfNameValueCodec } from './array-of-name-value.codec.js';
import { dataGridCodec, type DataGrid } from './data-grid.codec.js';
import type { FlatRecord } from './flat-record.js';
import { frenchCar2Codec, type FrenchCar2 } from './french-car2.codec.js';
import { insuranceDetailsCodec } from './insurance-details.codec.js';
import { insuranceCodec } from './insurance.codec.js';
import { insuredStatusCodec } from './insured-status.codec.js';
import { irishTaxiCodec } from './irish-taxi.codec.js';
import { londonTaxiCodec } from './london-taxi.codec.js';
import { preAssessmentSearchResultsCodec } from './pre-assessment-search-results.codec.js';
import type { ResultCodec, ResultContext } from './result-codec.js';
import { stringCodec } from './string.codec.js';
import { ukMotDataCodec } from './uk-mot-data.codec.js';
import { valuationCodec } from './valuation.codec.js';
import { vehicleCodec, type VehicleValue } from './vehicle.codec.js';

/**
 * Every result type of the interface and the value a result of that type carries. Adding a result
 * type is a line here, its codec file and a line in RESULT_CODECS; the compiler then refuses any
 * catalogue entry, dispatcher or test that does not know it (DESIGN.md "Result types are codecs").
 */
export interface ResultValues {
  Vehicle: VehicleValue;
  UKMOTData: MotDocument;
  ArrayOfPreAssessmentSearchResult: readonly NcapRating[];
  Valuation: FlatRecord;
  InsuredStatus: FlatRecord;
  InsuranceDetails: FlatRecord;
  Insurance: FlatRecord;
  ArrayOfNameValue: readonly FlatRecord[];
  string: string;
  FrenchCar2: FrenchCar2;
  IrishTaxi: FlatRecord;
  LondonTaxi: FlatRecord;
  DataGrid: DataGrid;
}

/** The result types of the interface (the catalogue's `resultType`). */
export type ResultType = keyof ResultValues;

/** The codec of each result type: a missing one is a type error. */
export const RESULT_CODECS: { readonly [K in ResultType]: ResultCodec<ResultValues[K]> } = {
  Vehicle: vehicleCodec,
  UKMOTData: ukMotDataCodec,
  ArrayOfPreAssessmentSearchResult: preAssessmentSearchResultsCodec,
  Valuation: valuationCodec,
  InsuredStatus: insuredStatusCodec,
  InsuranceDetails: insuranceDetailsCodec,
  Insurance: insuranceCodec,
  ArrayOfNameValue: arrayOfNameValueCodec,
  string: stringCodec,
  FrenchCar2: frenchCar2Codec,
  IrishTaxi: irishTaxiCodec,
  LondonTaxi: londonTaxiCodec,
  DataGrid: dataGridCodec,
};

/** A result as the pipeline hands it to the protocol adapters. */
export type LookupResult = { readonly [K in ResultType]: { readonly type: K; readonly value: ResultValues[K] } }[ResultType];

/**
 * The codec of a result type, for dispatchers that pass it only values of its own type (a result's
 * `value`, or what its own `fromRecord`/`sample` made).
 */
export function codecOf(type: ResultType): ResultCodec<unknown> {
  return RESULT_CODECS[type];
}

/** The result of a record found for an operation of `type`. */
export function resultOf(type: ResultType, record: unknown, context: ResultContext): LookupResult {
  // TypeScript cannot correlate `type` with the codec's value type across the union; codecOf(type)
  // made the value, so the pair is of one type by construction.
  return { type, value: codecOf(type).fromRecord(record, context) } as LookupResult;
}

/** The help pages' sample result of a result type. */
export function sampleOf(type: ResultType): LookupResult {
  return { type, value: codecOf(type).sample() } as LookupResult;
}

/** False when a successful lookup with this result costs nothing. */
export function isChargeable(result: LookupResult): boolean {
  return codecOf(result.type).isChargeable(result.value);
}

/** The JSON interface's body for a result. */
export function jsonBodyOf(result: LookupResult): unknown {
  return codecOf(result.type).jsonBody(result.value);
}

/** The JSON interface's body text for a result (an original answer's own text where it has one). */
export function jsonTextOf(result: LookupResult): string {
  const codec = codecOf(result.type);
  return codec.jsonText ? codec.jsonText(result.value) : JSON.stringify(codec.jsonBody(result.value));
}

/** The record of the original service's GET/POST answer of `type` (ResultCodec.fromXml). */
export function recordFromXml(type: ResultType, root: XmlElement): unknown {
  return codecOf(type).fromXml(root);
}
