import type { XmlElement } from '../xml/xml-reader.js';
import type { Attributes, XmlWriter } from '../xml/xml-writer.js';
import type { JsonSchema } from '../shared/json-schema.js';
import type { ImageUrlRule } from './image-url.js';

/**
 * What a codec reads of the operation a result is for: the catalogue's declaration satisfies it,
 * so the codecs need not know the catalogue (which names their result types: catalogue -> results).
 */
export interface ResultOperation {
  /** The members the answer keeps (CheckUKLite...); absent: all of them. */
  readonly fieldSubset?: readonly string[] | undefined;
  /** How ImageUrl is made for this operation (image-url.ts); absent: from make and model. */
  readonly imageUrl?: ImageUrlRule | undefined;
  /** vehicleData children the original never writes for this operation (issue 24 "Fidelity" 1); absent: none. */
  readonly vehicleDataOmits?: readonly string[] | undefined;
}

/** What a codec knows when it turns a stored record (or an upstream answer) into a result. */
export interface ResultContext {
  readonly operation: ResultOperation;
  /** Public base URL (no trailing slash) for absolute links such as ImageUrl. */
  readonly baseUrl: string;
}

/**
 * The binding a result is written for: `soap` ({Op}Result in an envelope) or `http` (the GET/POST
 * root element). They differ where the live service differs (vehicleData's empty values).
 */
export type XmlBinding = 'soap' | 'http';

/** A named complex type of the WSDL schema, written inside `<s:schema>` (see xsd.ts). */
export interface SchemaType {
  readonly name: string;
  write(w: XmlWriter): void;
}

/** How an import line carries a record of this result type (docs/import-format.md). */
export interface ImportPayload {
  /** The member of the JSON Lines object that holds the record (`vehicle`, `mot`, `ncap`, ...). */
  readonly field: string;
  /** The JSON type that member must have (checked before `validate`); `object` when absent. */
  readonly jsonType?: 'object' | 'array' | 'string';
  /** Why the payload (of its `jsonType`) cannot be stored, or undefined when it can. */
  validate(payload: unknown): string | undefined;
}

/**
 * Everything about one result type of the interface (DESIGN.md "Result types are codecs"): how a
 * stored record becomes the result, its JSON body, its XML content and WSDL schema types, its
 * help-page sample, its docs text, its import validation and whether a result is chargeable. The
 * pipeline and every adapter dispatch through RESULT_CODECS (index.ts), so a result type without a
 * codec is a type error rather than an empty body.
 *
 * Methods are declared as methods (not function properties) on purpose: their parameters are then
 * checked bivariantly, so a `ResultCodec<VehicleDocument>` can be handled as a `ResultCodec<unknown>`
 * by the dispatchers, which pass each codec only the values it produced.
 */
export interface ResultCodec<T> {
  /** The root element of the GET/POST answer and the global element of the WSDL (`Vehicle`, `string`). */
  readonly xmlName: string;
  /** The schema type of `{Op}Result` and of that global element (`tns:Vehicle`, `s:string`). */
  readonly xsdType: string;
  /** Named complex types it needs, in the order ASMX declares them; shared ones are declared once. */
  readonly schemaTypes: readonly SchemaType[];
  /** One line for docs/operations.md: what the JSON interface answers with. */
  readonly jsonDescription: string;
  readonly importPayload: ImportPayload;

  /** The result of a record a provider found; must not change `record` (it may be frozen and shared). */
  fromRecord(record: unknown, context: ResultContext): T;
  /**
   * The reader of what `writeXml` writes: the record (one `fromRecord` takes, the local store can
   * hold and an import line can carry) of the original service's GET/POST answer of this type,
   * whose root element `root` (named `xmlName`, in the service's namespace) the caller checked.
   * Throws XmlReadError when the content is not of this type (the answer is then unreadable).
   */
  fromXml(root: XmlElement): unknown;
  /** False when a successful lookup with this result costs nothing (an empty Euro NCAP list). */
  isChargeable(value: T): boolean;
  /**
   * The record to answer with when every provider says "not found", for result types whose source
   * lists only what it has (a stolen-vehicle register: not listed = the empty list). Absent: the
   * lookup fails with "{label} Lookup failed". Never used when a provider was unavailable.
   */
  recordWhenAbsent?(): unknown;
  /** The value JSON.stringify turns into the JSON interface's body. */
  jsonBody(value: T): unknown;
  /**
   * The JSON interface's body text, when it is not `JSON.stringify(jsonBody(value))`: an answer of
   * the original passed through byte for byte (Vehicle). Absent: the stringified jsonBody.
   */
  jsonText?(value: T): string;
  /**
   * The JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it) that every `jsonBody` of this result
   * type satisfies: the 200 body of the OpenAPI document, named there by `xmlName`
   * (`#/components/schemas/Vehicle`). Self-contained: no `$ref`, since a `$ref` inside it would
   * resolve against the OpenAPI document, not against this schema. Describe what the body really
   * holds and leave objects open (`additionalProperties`) where records vary; a test validates
   * every sample record's answer against it.
   */
  jsonSchema(): JsonSchema;
  /**
   * Writes the result element `element` with `attributes` and its content: `{Op}Result` in SOAP
   * (no attributes), the root element of GET/POST (namespace declarations).
   */
  writeXml(w: XmlWriter, element: string, attributes: Attributes, value: T, binding: XmlBinding): void;
  /** A result with one of everything, encoded by the real encoders on the help pages. */
  sample(): T;
}

/** `<element attrs>...</element>` with children from `write`, or `<element attrs />` when `empty`. */
export function writeComplex(w: XmlWriter, element: string, attributes: Attributes, empty: boolean, write: () => void): void {
  if (empty) {
    w.empty(element, attributes);
    return;
  }
  w.open(element, attributes);
  write();
  w.close();
}
