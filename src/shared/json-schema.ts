/**
 * A JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1's Schema Object) as plain data: what the
 * result codecs and input rules declare and the OpenAPI generator (src/http/lookup/json/openapi-document.ts)
 * copies into the document. Kept a plain object rather than a typed model so any keyword can be
 * written; the test suite validates every schema with a real OpenAPI validator and ajv.
 */
export type JsonSchema = { readonly [keyword: string]: unknown };
