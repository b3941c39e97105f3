import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

interface Document {
  paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, unknown> }> }>>;
  components: { responses?: Record<string, { content?: Record<string, unknown> }> };
}

/** The TypeScript types openapi-typescript generates from a document, as a client would. */
async function typesOf(document: Document): Promise<string> {
  return astToString(await openapiTS(document as unknown as OpenAPI3));
}

/**
 * One line per answer of the document (operation, status, media type) that uses its generated
 * type and fails to compile when a client could read nothing from it: a bare `{}` or an object of
 * an index signature only (what `{"type": "object"}` became), while strings, arrays and objects
 * with named members (optional ones too: a vehicle's members vary by country) pass.
 */
function everyAnswer(module: string, document: Document): string {
  const lines: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'parameters' || method === 'servers') continue;
      for (const [status, answer] of Object.entries(operation.responses)) {
        const content = answer.$ref === undefined ? answer.content : document.components.responses?.[answer.$ref.replace('#/components/responses/', '')]?.content;
        for (const mediaType of Object.keys(content ?? {})) {
          const type = `${module}['${path}']['${method}']['responses'][${status}]['content']['${mediaType}']`;
          lines.push(`export const answer${lines.length}: Readable<${type}> = true;`);
        }
      }
    }
  }
  return lines.join('\n');
}

const HELPERS = `
/** The members of T a client can name: not those of an index signature. */
type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: 0 };
/** true when a client can read something of T without a cast. */
type Readable<T> = [T] extends [string | number | boolean | null | readonly unknown[]] ? true : [KnownKeys<T>] extends [never] ? false : true;
`;

/** What the issue's integrator could not read, read as a typed client would. */
const ADMIN_READS = `
import type { paths } from './admin';
type Json<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends { responses: infer R }
  ? S extends keyof R ? R[S] extends { content: { 'application/json': infer B } } ? B : never : never
  : never;

declare const login: Json<'/admin/api/login', 'post', 200>;
export const csrfToken: string = login.csrfToken;
declare const created: Json<'/admin/api/accounts', 'post', 201>;
export const apiKey: string = created.apiKey;
export const credits: number = created.account.credits;
export const closedAt: string | null = created.account.closedAt;
declare const listed: Json<'/admin/api/accounts', 'get', 200>;
export const total: number = listed.total;
export const firstName: string | undefined = listed.accounts[0]?.username;
declare const ledger: Json<'/account/api/ledger', 'get', 200>;
export const firstDelta: number | undefined = ledger.rows[0]?.delta;
export const next: number | null = ledger.next;
declare const usage: Json<'/account/api/usage', 'get', 200>;
export const firstDay: string | undefined = usage.days[0]?.day;
declare const key: Json<'/account/api/keys', 'post', 201>;
export const secret: string = key.apiKey;
declare const me: Json<'/account/api/me', 'get', 200>;
export const maybeCsrf: string | undefined = me.csrfToken;
declare const refused: Json<'/admin/api/accounts', 'post', 409>;
export const taken: boolean = refused.error === 'already-exists';
// @ts-expect-error: the error codes are an enum, and this is not one of them.
export const unknownCode: boolean = refused.error === 'no-such-code';
declare const csv: paths['/account/api/ledger.csv']['get']['responses'][200]['content']['text/csv'];
export const csvText: string = csv;
`;

const LOOKUP_READS = `
import type { paths } from './lookup';
declare const vehicle: paths['/CheckFrance/{RegistrationNumber}']['get']['responses'][200]['content']['application/json'];
export const make: string | undefined = vehicle.CarMake?.CurrentTextValue;
export const colour: string | undefined = vehicle.Colour;
export const vin: string | undefined = vehicle.VechileIdentificationNumber;
declare const balance: paths['/ajax/getcredits.aspx']['get']['responses'][200]['content']['text/plain'];
export const credits: string = balance;
`;

/** Type-checks the files under `dir` as a strict TypeScript program; answers the diagnostics. */
function compile(dir: string, roots: readonly string[]): string[] {
  const program = ts.createProgram(
    roots.map((root) => join(dir, root)),
    { strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, types: [], lib: ['lib.es2022.d.ts'] },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1} ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

/**
 * Clients generated from both served OpenAPI documents (openapi-typescript, as an integrator
 * would) compile under `strict` with a program that uses every answer type of each document and
 * reads what the issue's integrator could not: the CSRF token, a new key, credits, rows, days,
 * accounts and total, an error code, a vehicle's make, colour and (misspelt) VIN.
 */
describe('clients generated from the served OpenAPI documents', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    t = await createTestApp({ SEED_DEMO: 'false' });
    dir = mkdtempSync(join(tmpdir(), 'vehicle-lookup-clients-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('type every answer so that a strict program can read it', async () => {
    const admin = (await t.app.inject({ url: '/admin/api/openapi.json' })).json<Document>();
    const lookup = (await t.app.inject({ url: '/openapi/lookup.json' })).json<Document>();
    writeFileSync(join(dir, 'admin.ts'), await typesOf(admin));
    writeFileSync(join(dir, 'lookup.ts'), await typesOf(lookup));
    writeFileSync(join(dir, 'admin-answers.ts'), `import type { paths } from './admin';\n${HELPERS}\n${everyAnswer('paths', admin)}\n`);
    writeFileSync(join(dir, 'lookup-answers.ts'), `import type { paths } from './lookup';\n${HELPERS}\n${everyAnswer('paths', lookup)}\n`);
    writeFileSync(join(dir, 'admin-reads.ts'), ADMIN_READS);
    writeFileSync(join(dir, 'lookup-reads.ts'), LOOKUP_READS);
    expect(compile(dir, ['admin-answers.ts', 'lookup-answers.ts', 'admin-reads.ts', 'lookup-reads.ts'])).toEqual([]);
    // Generating ~700 kB of types and type-checking them strictly takes about 15 s on a quiet
    // 2-core machine (4 s of generation, the rest tsc); the default 30 s is too tight under load.
  }, 120_000);

  it('fails to compile a program that reads an untyped answer (the check above can fail)', () => {
    writeFileSync(join(dir, 'untyped.ts'), `${HELPERS}\nexport const bare: Readable<{ [key: string]: unknown }> = true;\nexport const empty: Readable<Record<string, never>> = true;\n`);
    expect(compile(dir, ['untyped.ts'])).toHaveLength(2);
  });
});
