import type { ImageUrlRule } from '../results/image-url.js';
import type { ResultType } from '../results/index.js';
import type { InputRule } from './input-rules.js';

/** The SOAP services of the original: `/api/reg.asmx` and `/api/bespokeapi.asmx`. */
export type ServiceId = 'reg' | 'bespoke';

/** The result types of the interface spec ("Resources and their fields"): one codec each (src/results/). */
export type { ResultType } from '../results/index.js';
export type { ImageUrlRule } from '../results/image-url.js';

/** XML Schema type of a parameter in the SOAP body (GET/POST always send text). */
export type XmlType = 's:string' | 's:int';

/**
 * What kind of record a dataset holds: keyed records (`vehicle`, `mot`, and `record` for every
 * other result type) or the rating search (`ncap`). The result type's codec, not the kind, decides
 * the import payload field and the result, so a new result type needs no new kind.
 */
export type DatasetKind = 'vehicle' | 'mot' | 'ncap' | 'record';

export interface ParameterDeclaration {
  /** Exact (case-sensitive) element name in SOAP bodies; matched case-insensitively in GET/POST. */
  readonly name: string;
  readonly xmlType: XmlType;
  /** `username` authenticates on the XML bindings; it is never part of a lookup key. */
  readonly role: 'key' | 'filter' | 'username' | 'ignored';
  /** Validation and normalisation; absent for `username`. */
  readonly rule?: InputRule;
  /** False when an empty or missing value is acceptable. */
  readonly required: boolean;
  readonly description: string;
  /**
   * Other element names the XML bindings accept for it when the declared one is absent (clients
   * written against the original send them); not in the WSDL.
   */
  readonly aliases?: readonly string[];
  /**
   * A value to show in documentation (OpenAPI examples, help pages) for a parameter that is not
   * part of the stored key, so the sample data cannot supply one (CheckPrice's mileage).
   */
  readonly example?: string;
}

/** One path segment of the JSON interface, `/api/json.aspx/{Method}/{segment}/...`. */
export interface JsonSegment {
  /** Name shown in docs (`{Province}`), may differ from the parameter it fills. */
  readonly label: string;
  /** The parameter the segment fills; several segments filling one parameter are joined. */
  readonly parameter: string;
  readonly optional: boolean;
}

export interface JsonPathShape {
  readonly segments: readonly JsonSegment[];
  /** Separator when several segments fill one parameter (CheckGermany: `/{Prefix}/{Suffix}`). */
  readonly joinWith?: string;
}

export interface DatasetDeclaration {
  /** Storage name; operations sharing a dataset read the same records. */
  readonly name: string;
  readonly kind: DatasetKind;
}

/**
 * One operation of the interface, declared once. Every protocol, the WSDL, the help pages and the
 * docs are generated from this declaration; nothing here names a protocol's wire details beyond
 * the types the interface spec gives.
 */
export interface OperationDeclaration {
  readonly name: string;
  /** Country or subject, used in messages ("France Lookup failed"). */
  readonly label: string;
  /**
   * The country (or territory) whose vehicles it looks up, where there is one: pages group the
   * operations by it (Try it's select). Absent for lookups by VIN and by make and model, which
   * are not tied to a country. The label cannot serve: it is "UK motorbike", "Irish taxi", "Valuation".
   */
  readonly country?: string;
  readonly documentation: string;
  readonly services: readonly ServiceId[];
  /** Parameters in wire order, `username` included where the original puts it (last). */
  readonly parameters: readonly ParameterDeclaration[];
  readonly jsonPath: JsonPathShape;
  readonly resultType: ResultType;
  /** Credits debited by a successful lookup. */
  readonly cost: number;
  readonly dataset: DatasetDeclaration;
  /**
   * Restricted variants serve only these top-level vehicleJson members (plus ImageUrl). Absent:
   * the stored document is served whole.
   */
  readonly fieldSubset?: readonly string[];
  /** Vehicle results: how ImageUrl is made when the record has none; `make-model` when absent. */
  readonly imageUrl?: ImageUrlRule;
  /**
   * Vehicle results: vehicleData children the original never writes for this operation although
   * vehicleJson has them (live reg.asmx/Check and CheckAustralia answers hold no
   * MakeDescription/ModelDescription in vehicleData: issue 24 "Fidelity" 1). Absent: none left out.
   */
  readonly vehicleDataOmits?: readonly string[];
}
