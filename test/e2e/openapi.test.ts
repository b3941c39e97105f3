import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { CREDITS_PATH, generateOpenApi, sampleParameterExamples } from '../../src/http/lookup/json/openapi-document.js';
import { OPENAPI_PATHS } from '../../src/http/lookup/json/openapi.plugin.js';
import { jsonPathFor, sampleLines, type SampleLine } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/** The parts of the document these tests read. */
interface Parameter {
  name: string;
  in: string;
  schema: object;
  example?: string;
}
interface Response {
  headers?: Record<string, { $ref: string }>;
  content: Record<string, { schema: { $ref?: string } }>;
}
interface Operation {
  operationId: string;
  parameters: Parameter[];
  responses: Record<string, { $ref: string }>;
}
interface Document {
  servers: Array<{ url: string }>;
  paths: Record<string, { get: Operation }>;
  components: { schemas: Record<string, object>; responses: Record<string, Response>; headers: Record<string, { required?: boolean }> };
}

const catalogue = new Catalogue();
const generated = generateOpenApi(catalogue, sampleParameterExamples(catalogue)) as unknown as Document;

/** A `#/components/{kind}/{name}` reference's name. */
function refName(ref: string, kind: string): string {
  const prefix = `#/components/${kind}/`;
  if (!ref.startsWith(prefix)) throw new Error(`unexpected reference ${ref}`);
  return ref.slice(prefix.length);
}

function newAjv(): Ajv2020 {
  // strict: an unknown keyword or a malformed pattern in a schema is an error, not ignored; union
  // types (`type: ['string', 'null']`) are plain JSON Schema, which strict mode would refuse.
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats.default(ajv);
  return ajv;
}

/**
 * The path values of a sample record, in path order: the record's key for lookups, Make and Model
 * for a rating (CheckEuroNCap finds ratings by them, json-interface.test.ts does the same).
 */
function pathValues(line: SampleLine): string[] {
  const op = catalogue.find(line.operation);
  if (!op) throw new Error(`sample names no operation ${line.operation}`);
  if (line.ncap) return [String(line.ncap.Make), String(line.ncap.Model)];
  const built = jsonPathFor(op, line.key ?? {}).slice(`/api/json.aspx/${op.name}/`.length);
  return built.split('/').map(decodeURIComponent);
}

/** The document's path of an operation taking `count` path values. */
function templateFor(doc: Document, operation: string, count: number): [string, Operation] {
  const found = Object.entries(doc.paths).find(([path, item]) => path.startsWith(`/${operation}/`) && item.get.parameters.length === count);
  if (!found) throw new Error(`the document has no path for ${operation} with ${count} values`);
  return [found[0], found[1].get];
}

describe('the OpenAPI document of the JSON interface', () => {
  it('is a valid OpenAPI 3.1 document (checked by @seriousme/openapi-schema-validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(generateOpenApi(catalogue, sampleParameterExamples(catalogue))));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('refuses a document that breaks the OpenAPI schema, so the check above can fail', async () => {
    const broken = structuredClone(generated) as unknown as Record<string, unknown>;
    delete broken.info;
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('has a path for every catalogue operation and each number of path values it takes', () => {
    for (const op of catalogue.operations) {
      const required = Catalogue.requiredPathSegments(op);
      for (let count = required; count <= op.jsonPath.segments.length; count++) {
        const [path, operation] = templateFor(generated, op.name, count);
        expect(path).toBe(`/${op.name}${op.jsonPath.segments.slice(0, count).map((s) => `/{${s.label}}`).join('')}`);
        if (count === required) expect(operation.operationId).toBe(op.name);
        expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '403', '422', '429', '500']);
      }
    }
    const expectedPaths = catalogue.operations.reduce((n, op) => n + op.jsonPath.segments.length - Catalogue.requiredPathSegments(op) + 1, 0);
    // And the original's balance page, at the site's root.
    expect(Object.keys(generated.paths)).toHaveLength(expectedPaths + 1);
    expect(generated.paths['/CheckGermany/{Prefix}/{Suffix}']).toBeDefined();
    expect(generated.paths['/CheckEuroNCap/{Make}']).toBeDefined();
  });

  it('declares the 401 challenge, the 429 Retry-After, plain-text errors and the credit headers', () => {
    const { responses, headers } = generated.components;
    expect(Object.keys(responses.Unauthorized?.headers ?? {})).toEqual(['WWW-Authenticate', 'x-request-id']);
    expect(Object.keys(responses.RateLimited?.headers ?? {})).toEqual(['Retry-After', 'x-request-id']);
    // Media-type keys without parameters (generated clients look answers up by the bare type).
    for (const name of ['BadHost', 'Unauthorized', 'IdempotencyConflict', 'RateLimited', 'LookupFailed']) {
      expect(Object.keys(responses[name]?.content ?? {})).toEqual(['text/plain']);
    }
    expect(Object.keys(responses.Vehicle?.content ?? {})).toEqual(['application/json']);
    expect(Object.keys(responses.Vehicle?.headers ?? {})).toEqual(['x-credits-charged', 'x-credits-remaining', 'x-lookup-source', 'idempotent-replayed', 'x-request-id']);
    expect(headers.CreditsCharged?.required).toBe(true);
  });

  it('gives a state list as an enum and every schema compiles under strict ajv', () => {
    const [, usa] = templateFor(generated, 'CheckUSA', 2);
    expect(usa.parameters[1]?.schema).toMatchObject({ enum: expect.arrayContaining(['CA', 'NY', 'DC']) as unknown });
    const ajv = newAjv();
    for (const item of Object.values(generated.paths)) for (const p of item.get.parameters) ajv.compile(p.schema);
    for (const schema of Object.values(generated.components.schemas)) ajv.compile(schema);
  });

  it('accepts every sample record\'s path values with its parameter schemas', () => {
    const ajv = newAjv();
    for (const line of sampleLines()) {
      const values = pathValues(line);
      const [path, operation] = templateFor(generated, line.operation, values.length);
      operation.parameters.forEach((parameter, i) => {
        const validate = ajv.compile(parameter.schema);
        expect(validate(values[i]), `${path} ${parameter.name}=${values[i] ?? ''}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      });
    }
  });

  it('refuses path values the service refuses: a state not on the list, a VIN of 16 characters', () => {
    const ajv = newAjv();
    const [, usa] = templateFor(generated, 'CheckUSA', 2);
    expect(ajv.compile(usa.parameters[1]?.schema ?? {})('XX')).toBe(false);
    const [, vin] = templateFor(generated, 'VinCheck', 1);
    expect(ajv.compile(vin.parameters[0]?.schema ?? {})('1HGCM82633A00435')).toBe(false);
  });
});

describe('the OpenAPI document served by the service', () => {
  let t: TestApp;
  let base: string;
  let auth: string;

  beforeAll(async () => {
    t = await createTestApp();
    const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    expect(summary.committed).toBe(true);
    auth = t.basic('alice', await t.account('alice', 100_000));
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => t.close());

  async function servedDocument(): Promise<Document> {
    const res = await fetch(`${base}${OPENAPI_PATHS.document}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    return (await res.json()) as Document;
  }

  it('serves the generated document without credentials', async () => {
    expect(await servedDocument()).toEqual(generated);
  });

  it('answers 200 with a body matching the declared schema for a request built from the document, for every sample record', async () => {
    const doc = await servedDocument();
    const ajv = newAjv();
    const validators = new Map<string, ValidateFunction>();
    const answered = new Set<string>();
    for (const line of sampleLines()) {
      const values = pathValues(line);
      const [path, operation] = templateFor(doc, line.operation, values.length);
      let url = `${base}${doc.servers[0]?.url ?? ''}${path}`;
      operation.parameters.forEach((parameter, i) => {
        url = url.replace(`{${parameter.name}}`, encodeURIComponent(values[i] ?? ''));
      });
      const res = await fetch(url, { headers: { authorization: auth } });
      expect(res.status, `${url}: ${res.status === 200 ? '' : await res.clone().text()}`).toBe(200);

      const responseName = refName(operation.responses['200']?.$ref ?? '', 'responses');
      const declared = doc.components.responses[responseName];
      if (!declared) throw new Error(`no response ${responseName}`);
      const [mediaType, media] = Object.entries(declared.content)[0] ?? [];
      expect(res.headers.get('content-type')?.split(';', 1)[0]).toBe(mediaType);
      for (const header of ['x-credits-charged', 'x-credits-remaining']) expect(res.headers.get(header), `${url} ${header}`).toMatch(/^\d+$/);
      expect(res.headers.get('x-request-id'), url).toMatch(/^[0-9a-f-]{36}$/);
      expect(Object.keys(declared.headers ?? {})).toContain('x-request-id');

      const schemaName = refName(media?.schema.$ref ?? '', 'schemas');
      let validate = validators.get(schemaName);
      if (!validate) {
        validate = ajv.compile(doc.components.schemas[schemaName] ?? {});
        validators.set(schemaName, validate);
      }
      const body: unknown = await res.json();
      expect(validate(body), `${url}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      answered.add(line.operation);
    }
    expect([...answered].sort()).toEqual(catalogue.operations.map((op) => op.name).sort());
  });

  it('answers the Idempotency-Key header as the document says: a replay says so and costs nothing, another lookup under the key is a 422', async () => {
    const doc = await servedDocument();
    const [path, operation] = templateFor(doc, 'CheckFrance', 1);
    const item = doc.paths[path] as unknown as { parameters: Array<{ $ref: string }> };
    expect(item.parameters).toEqual([{ $ref: '#/components/parameters/IdempotencyKey' }]);
    expect(operation.responses['422']).toEqual({ $ref: '#/components/responses/IdempotencyConflict' });
    const url = (plate: string): string => `${base}${doc.servers[0]?.url ?? ''}${path.replace('{RegistrationNumber}', plate)}`;
    const plate = operation.parameters[0]?.example ?? '';
    const headers = { authorization: auth, 'idempotency-key': 'openapi-test-1' };
    const first = await fetch(url(plate), { headers });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await fetch(url(plate), { headers });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-credits-charged')).toBe('0');
    const other = await fetch(url('ZZ999ZZ'), { headers });
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')?.split(';', 1)[0]).toBe(Object.keys(doc.components.responses.IdempotencyConflict?.content ?? {})[0]);
  });

  it('documents the balance page at the site root, and it answers as documented', async () => {
    const doc = await servedDocument();
    const credits = doc.paths[CREDITS_PATH] as unknown as { servers: Array<{ url: string }>; get: Operation & { security: unknown[] } };
    expect(credits.servers).toEqual([{ url: '/', description: 'This service' }]);
    expect(credits.get.security).toEqual([]);
    const res = await fetch(`${base}${CREDITS_PATH}?username=alice`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')?.split(';', 1)[0]).toBe('text/plain');
    expect(await res.text()).toMatch(/^\d+$/);
  });

  it('answers as the document says without credentials (401 challenge) and for a refused value (500 text)', async () => {
    const doc = await servedDocument();
    const [path] = templateFor(doc, 'CheckUSA', 2);
    const url = `${base}${doc.servers[0]?.url ?? ''}${path.replace('{RegistrationNumber}', '7KDJ294')}`;
    const anonymous = await fetch(url.replace('{State}', 'CA'));
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect(anonymous.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const refused = await fetch(url.replace('{State}', 'XX'), { headers: { authorization: auth } });
    expect(refused.status).toBe(500);
    expect(refused.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  });

  it('gives every parameter an example from the sample data that answers 200 on a seeded store', async () => {
    const doc = await servedDocument();
    for (const [path, item] of Object.entries(doc.paths)) {
      if (path === CREDITS_PATH) continue;
      const { parameters } = item.get;
      // UKMOT's Make is accepted and ignored: the sample MOT records carry no make to show.
      if (parameters.some((p) => p.example === undefined)) {
        expect(path).toBe('/UKMOT/{RegistrationNumber}/{Make}');
        continue;
      }
      let url = `${base}${doc.servers[0]?.url ?? ''}${path}`;
      for (const p of parameters) url = url.replace(`{${p.name}}`, encodeURIComponent(p.example ?? ''));
      const res = await fetch(url, { headers: { authorization: auth } });
      expect(res.status, `${url}: ${res.status === 200 ? '' : await res.text()}`).toBe(200);
    }
  });

  it('serves the documentation page with its own script and style under a policy that allows nothing else', async () => {
    const page = await fetch(`${base}${OPENAPI_PATHS.page}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe-inline');
    const html = await page.text();
    expect(html).toContain(`data-openapi="${OPENAPI_PATHS.document}"`);
    // No inline code and nothing from another origin: the page works offline under the policy.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toMatch(/\b(src|href)="(https?:)?\/\//);
    for (const asset of [OPENAPI_PATHS.script, OPENAPI_PATHS.style]) {
      expect(html).toContain(asset);
      const res = await fetch(`${base}${asset}`);
      expect(res.status, asset).toBe(200);
      expect((await res.text()).length).toBeGreaterThan(100);
    }
  });
});
