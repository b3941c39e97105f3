import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ERROR_CODES, type ApiErrorCode } from '../../src/http/api/api-error-codes.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { FRANCE, login, PASSWORD, users, type Login } from './admin-harness.js';

// ajv-formats is CommonJS: its default export is the module object under NodeNext.
const addFormats = addFormatsImport as unknown as (ajv: Ajv2020) => Ajv2020;

type Schema = Record<string, unknown>;
interface Operation {
  security?: Array<Record<string, string[]>>;
  responses: Record<string, { content?: Record<string, { schema: Schema; example?: unknown }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A call as the test makes it: the document's path and the real one, who calls, what it sends. */
interface Call {
  readonly method: Method;
  readonly path: string;
  readonly url: string;
  readonly who?: Login | undefined;
  readonly payload?: unknown;
  readonly headers?: Record<string, string>;
}

/**
 * Live answers of the admin and account APIs against their served OpenAPI document: every
 * operation of the document is called for real, and each answer's status, media type and body are
 * checked against what the document says of that operation; so is the body before Fastify's
 * response schema serialises it (a member the schema does not list would be dropped silently, and
 * the document is closed: additionalProperties false). Security: each call sends the CSRF token
 * only when the document's security asks for it (so reads prove they need none), and each
 * non-public operation is called again without credentials (401) and, for writes, without the
 * CSRF token (403 csrf). Some error answers are checked against the Error schema too.
 */
describe('live answers of the admin and account APIs against their OpenAPI document', () => {
  let t: TestApp;
  let doc: Document;
  let ajv: Ajv2020;
  const beforeSerialisation = new Map<string, unknown>();
  const validators = new Map<Schema, ValidateFunction>();
  /** `METHOD path` of each operation answered with a success. */
  const succeeded = new Set<string>();
  const calls: Call[] = [];

  const validate = (schema: Schema, value: unknown, what: string): void => {
    const resolved = typeof schema.$ref === 'string' ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;
    if (resolved === undefined) throw new Error(`${what}: no schema ${String(schema.$ref)}`);
    let check = validators.get(resolved);
    if (!check) {
      check = ajv.compile(resolved);
      validators.set(resolved, check);
    }
    expect(check(value) ? [] : check.errors, what).toEqual([]);
  };

  /** Sends a call and checks its answer against the document; answers the response. */
  const send = async (call: Call, options: { csrf?: boolean; credentials?: boolean } = {}): Promise<LightMyRequestResponse> => {
    const operation = doc.paths[call.path]?.[call.method.toLowerCase()];
    if (!operation) throw new Error(`the document has no ${call.method} ${call.path}`);
    const csrf = options.csrf ?? (operation.security ?? []).some((requirement) => 'csrf' in requirement);
    const credentials = options.credentials ?? true;
    const headers: Record<string, string> = { ...call.headers };
    if (credentials && call.who) {
      headers.cookie = call.who.cookie;
      if (csrf) headers['x-csrf-token'] = call.who.csrf;
    }
    const payload = call.payload;
    const res = await t.app.inject({
      method: call.method,
      url: call.url,
      headers,
      ...(payload === undefined ? {} : typeof payload === 'string' ? { payload } : { payload: payload as Record<string, unknown> }),
    });
    const what = `${call.method} ${call.url} → ${res.statusCode} ${res.body.slice(0, 300)}`;
    const answer = operation.responses[String(res.statusCode)];
    expect(answer, `${what}: a status the document does not list`).toBeDefined();
    if (res.statusCode === 204) {
      expect(res.body, what).toBe('');
      return res;
    }
    const mediaType = String(res.headers['content-type']).split(';', 1)[0] ?? '';
    const content = answer?.content?.[mediaType];
    expect(content, `${what}: media type ${mediaType} is not the document's (${Object.keys(answer?.content ?? {}).join(', ')})`).toBeDefined();
    const body: unknown = mediaType === 'application/json' ? res.json() : res.body;
    validate(content?.schema ?? {}, body, what);
    const raw = beforeSerialisation.get(String(res.headers['x-request-id']));
    if (raw !== undefined) validate(content?.schema ?? {}, JSON.parse(JSON.stringify(raw)), `${what} (before serialisation)`);
    if (res.statusCode >= 400) {
      const code = (body as { error: ApiErrorCode }).error;
      expect(API_ERROR_CODES[code].status, `${what}: the status of ${code}`).toBe(res.statusCode);
    }
    return res;
  };

  /** A call that must succeed; recorded for the security checks and the coverage check. */
  const ok = async (call: Call): Promise<LightMyRequestResponse> => {
    const res = await send(call);
    expect(res.statusCode, `${call.method} ${call.url}: ${res.body}`).toBeLessThan(300);
    succeeded.add(`${call.method} ${call.path}`);
    calls.push(call);
    return res;
  };

  beforeAll(async () => {
    t = await createTestApp(
      { SEED_DEMO: 'false', SIGNUP_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_MS: '600000', CREDIT_ALERT_SWEEP_MS: '3600000' },
      undefined,
      'sqlite',
      {
        beforeRoutes: (app) => {
          app.addHook('preSerialization', async (request, _reply, payload) => {
            beforeSerialisation.set(request.id, payload);
            return payload;
          });
        },
      },
    );
    ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    doc = (await t.app.inject({ url: '/admin/api/openapi.json' })).json<Document>();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers every operation as the document says: status, media type, body (also before serialisation) and security', async () => {
    await t.importRecords([FRANCE]);
    const aliceKey = await t.account('alice', 50);
    // A charged lookup, so the ledger, usage and lookup statistics have rows.
    const lookup = await t.app.inject({ url: `/api/json.aspx/CheckFrance/${FRANCE.key.RegistrationNumber}`, headers: { authorization: t.basic('alice', aliceKey) } });
    expect(lookup.statusCode).toBe(200);
    await t.lookupRollup.flush();

    // Operators: root logs in through the API; a second operator accepts an invite, changes its password and logs out.
    const { inviteToken: rootInvite } = await users(t).createOperator('root', 'admin', true);
    await users(t).acceptInvite(rootInvite ?? '', PASSWORD);
    const rootLogin = await ok({ method: 'POST', path: '/admin/api/login', url: '/admin/api/login', payload: { username: 'root', password: PASSWORD } });
    const root: Login = { cookie: String(rootLogin.headers['set-cookie']).split(';', 1)[0] ?? '', csrf: rootLogin.json<{ csrfToken: string }>().csrfToken };
    const { inviteToken: opInvite } = await users(t).createOperator('second', 'admin', true);
    await ok({ method: 'POST', path: '/admin/api/invite/accept', url: '/admin/api/invite/accept', payload: { token: opInvite, password: PASSWORD } });
    const second = await login(t, 'admin', 'second');
    await ok({ method: 'POST', path: '/admin/api/me/password', url: '/admin/api/me/password', who: second, payload: { currentPassword: PASSWORD, newPassword: `${PASSWORD} 2` } });
    await ok({ method: 'POST', path: '/admin/api/logout', url: '/admin/api/logout', who: second });
    await ok({ method: 'POST', path: '/admin/api/logout-everywhere', url: '/admin/api/logout-everywhere', who: await login(t, 'admin', 'second', `${PASSWORD} 2`) });
    await ok({ method: 'GET', path: '/admin/api/me', url: '/admin/api/me', who: root });

    // Accounts.
    const A = '/admin/api/accounts';
    const U = `${A}/{username}`;
    await ok({ method: 'GET', path: A, url: A, who: root });
    await ok({ method: 'POST', path: A, url: A, who: root, payload: { username: 'bob', credits: 5 } });
    await ok({ method: 'GET', path: U, url: `${A}/alice`, who: root });
    await ok({ method: 'PATCH', path: U, url: `${A}/bob`, who: root, payload: { requireApiKey: true, rateLimits: { perSecond: 5, perDay: null } } });
    await ok({ method: 'POST', path: `${U}/credits`, url: `${A}/alice/credits`, who: root, payload: { operation: 'grant', amount: 10, reference: 'invoice 1', note: 'top-up' } });
    await ok({ method: 'GET', path: `${U}/balance`, url: `${A}/alice/balance`, who: root });
    await ok({ method: 'GET', path: `${U}/keys`, url: `${A}/alice/keys`, who: root });
    const adminKey = (await ok({ method: 'POST', path: `${U}/keys`, url: `${A}/alice/keys`, who: root, payload: { name: 'second' } })).json<{ key: { id: number } }>().key.id;
    await ok({ method: 'PATCH', path: `${U}/keys/{id}`, url: `${A}/alice/keys/${adminKey}`, who: root, payload: { cap: { credits: 500, period: 'month' }, operations: ['CheckUSA'], labels: { env: 'staging' } } });
    await ok({ method: 'POST', path: `${U}/keys/{id}/roll`, url: `${A}/alice/keys/${adminKey}/roll`, who: root, payload: { graceSeconds: 60 } });
    await ok({ method: 'POST', path: `${U}/keys/{id}/revoke`, url: `${A}/alice/keys/${adminKey}/revoke`, who: root });
    await ok({ method: 'GET', path: `${U}/ledger`, url: `${A}/alice/ledger`, who: root });
    await ok({ method: 'GET', path: `${U}/ledger.csv`, url: `${A}/alice/ledger.csv`, who: root });
    const range = 'from=2000-01-01T00:00:00Z&to=2000-12-31T00:00:00Z';
    const today = new Date();
    const recent = `from=${new Date(today.getTime() - 86_400_000).toISOString()}&to=${new Date(today.getTime() + 86_400_000).toISOString()}`;
    await ok({ method: 'GET', path: `${U}/usage`, url: `${A}/alice/usage?${recent}`, who: root });
    await ok({ method: 'GET', path: `${U}/usage/keys`, url: `${A}/alice/usage/keys?${recent}`, who: root });
    await ok({ method: 'GET', path: `${U}/users`, url: `${A}/alice/users`, who: root });
    const invited = (await ok({ method: 'POST', path: `${U}/users`, url: `${A}/alice/users`, who: root, payload: { name: 'alice-owner', role: 'owner' } })).json<{ inviteToken: string }>();
    await ok({ method: 'GET', path: `${U}/alerts`, url: `${A}/alice/alerts`, who: root });
    await ok({ method: 'PUT', path: `${U}/alerts`, url: `${A}/alice/alerts`, who: root, payload: { thresholds: [10, 5] } });
    await ok({ method: 'POST', path: A, url: A, who: root, payload: { username: 'gone' } });
    await ok({ method: 'DELETE', path: U, url: `${A}/gone`, who: root });

    // Operators, tokens, audit, operations, imports.
    await ok({ method: 'GET', path: '/admin/api/operators', url: '/admin/api/operators', who: root });
    const token = (await ok({ method: 'POST', path: '/admin/api/tokens', url: '/admin/api/tokens', who: root, payload: { name: 'ci', scope: 'read' } })).json<{ token: { id: number } }>().token.id;
    await ok({ method: 'GET', path: '/admin/api/tokens', url: '/admin/api/tokens', who: root });
    await ok({ method: 'POST', path: '/admin/api/tokens/{id}/revoke', url: `/admin/api/tokens/${token}/revoke`, who: root });
    await ok({ method: 'GET', path: '/admin/api/audit', url: '/admin/api/audit?limit=500', who: root });
    await ok({ method: 'GET', path: '/admin/api/providers', url: '/admin/api/providers', who: root });
    await ok({ method: 'GET', path: '/admin/api/usage', url: `/admin/api/usage?${recent}`, who: root });
    await ok({ method: 'GET', path: '/admin/api/lookup-stats', url: `/admin/api/lookup-stats?${recent}`, who: root });
    await ok({ method: 'GET', path: '/admin/api/usage', url: `/admin/api/usage?${range}`, who: root });
    await ok({ method: 'POST', path: '/admin/api/test-plates', url: '/admin/api/test-plates', who: root, payload: { operation: 'CheckFrance', values: ['AB123CD'] } });
    await ok({ method: 'GET', path: '/admin/api/test-plates', url: '/admin/api/test-plates', who: root });
    await ok({ method: 'DELETE', path: '/admin/api/test-plates', url: '/admin/api/test-plates', who: root, payload: { operation: 'CheckFrance', values: ['AB123CD'] } });
    const upload = `${JSON.stringify(FRANCE)}\nnot json\n`;
    const job = (
      await ok({ method: 'POST', path: '/admin/api/imports', url: '/admin/api/imports?skipInvalid=true&fileName=cars.jsonl', who: root, payload: upload, headers: { 'content-type': 'application/x-ndjson' } })
    ).json<{ import: { id: number } }>().import.id;
    await ok({ method: 'GET', path: '/admin/api/imports', url: '/admin/api/imports', who: root });
    await ok({ method: 'GET', path: '/admin/api/imports/{id}', url: `/admin/api/imports/${job}`, who: root });

    // Customers: the invited owner, and a sign-up.
    await ok({ method: 'POST', path: '/account/api/invite/accept', url: '/account/api/invite/accept', payload: { token: invited.inviteToken, password: PASSWORD } });
    const ownerLogin = await ok({ method: 'POST', path: '/account/api/login', url: '/account/api/login', payload: { username: 'alice-owner', password: PASSWORD } });
    const owner: Login = { cookie: String(ownerLogin.headers['set-cookie']).split(';', 1)[0] ?? '', csrf: ownerLogin.json<{ csrfToken: string }>().csrfToken };
    const signedUp = await ok({ method: 'POST', path: '/account/api/signup', url: '/account/api/signup', payload: { username: 'carol', password: 'a long enough password' } });
    const carol: Login = { cookie: String(signedUp.headers['set-cookie']).split(';', 1)[0] ?? '', csrf: signedUp.json<{ csrfToken: string }>().csrfToken };
    await ok({ method: 'POST', path: '/account/api/me/password', url: '/account/api/me/password', who: carol, payload: { currentPassword: 'a long enough password', newPassword: 'another long password' } });
    await ok({ method: 'POST', path: '/account/api/logout', url: '/account/api/logout', who: carol });
    await ok({ method: 'POST', path: '/account/api/logout-everywhere', url: '/account/api/logout-everywhere', who: await login(t, 'account', 'carol', 'another long password') });
    const C = '/account/api';
    await ok({ method: 'GET', path: `${C}/me`, url: `${C}/me`, who: owner });
    await ok({ method: 'GET', path: `${C}/account`, url: `${C}/account`, who: owner });
    await ok({ method: 'GET', path: `${C}/balance`, url: `${C}/balance`, who: owner });
    await ok({ method: 'GET', path: `${C}/keys`, url: `${C}/keys`, who: owner });
    const ownKey = (await ok({ method: 'POST', path: `${C}/keys`, url: `${C}/keys`, who: owner, payload: { name: 'mine', perSecond: 5, allowedIps: ['203.0.113.0/24'] } })).json<{ key: { id: number } }>().key.id;
    await ok({ method: 'PATCH', path: `${C}/keys/{id}`, url: `${C}/keys/${ownKey}`, who: owner, payload: { perSecond: null } });
    await ok({ method: 'POST', path: `${C}/keys/{id}/roll`, url: `${C}/keys/${ownKey}/roll`, who: owner });
    await ok({ method: 'POST', path: `${C}/keys/{id}/revoke`, url: `${C}/keys/${ownKey}/revoke`, who: owner });
    await ok({ method: 'GET', path: `${C}/ledger`, url: `${C}/ledger?type=lookups`, who: owner });
    await ok({ method: 'GET', path: `${C}/ledger.csv`, url: `${C}/ledger.csv`, who: owner });
    await ok({ method: 'GET', path: `${C}/usage`, url: `${C}/usage?${recent}`, who: owner });
    await ok({ method: 'GET', path: `${C}/usage/keys`, url: `${C}/usage/keys?${recent}`, who: owner });
    await ok({ method: 'GET', path: `${C}/alerts`, url: `${C}/alerts`, who: owner });
    await ok({ method: 'PUT', path: `${C}/alerts`, url: `${C}/alerts`, who: owner, payload: { thresholds: null } });

    // Webhook endpoints: an account's (both APIs) and the operators' own.
    for (const [who, base, real] of [
      [root, '/admin/api/accounts/{username}', '/admin/api/accounts/alice'],
      [root, '/admin/api', '/admin/api'],
      [owner, '/account/api', '/account/api'],
    ] as const) {
      const W = `${base}/webhooks`;
      const w = `${real}/webhooks`;
      const id = (await ok({ method: 'POST', path: W, url: w, who, payload: { url: 'http://127.0.0.1:9/hook', description: 'alerts' } })).json<{ endpoint: { id: number } }>().endpoint.id;
      await ok({ method: 'GET', path: W, url: w, who });
      await ok({ method: 'GET', path: `${W}/{id}`, url: `${w}/${id}`, who });
      await ok({ method: 'PATCH', path: `${W}/{id}`, url: `${w}/${id}`, who, payload: { enabled: false } });
      await ok({ method: 'POST', path: `${W}/{id}/rotate-secret`, url: `${w}/${id}/rotate-secret`, who, payload: { graceSeconds: 60 } });
      const sent = (await ok({ method: 'POST', path: `${W}/{id}/test`, url: `${w}/${id}/test`, who })).json<{ message: { id: string } }>().message.id;
      // Its one attempt settled (a disabled endpoint records a failed attempt), so a resend is not refused as in flight.
      await t.services.alerting.dispatcher.drain();
      await ok({ method: 'POST', path: `${W}/{id}/messages/{messageId}/resend`, url: `${w}/${id}/messages/${sent}/resend`, who });
      await ok({ method: 'GET', path: `${W}/{id}/messages`, url: `${w}/${id}/messages`, who });
      await ok({ method: 'GET', path: `${W}/{id}/deliveries`, url: `${w}/${id}/deliveries`, who });
      await ok({ method: 'DELETE', path: `${W}/{id}`, url: `${w}/${id}`, who });
    }

    // Every operation of the document was answered with a success above.
    const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.filter((operation) => !succeeded.has(operation))).toEqual([]);
    // The answers before serialisation were seen (the check above is not vacuous).
    expect(beforeSerialisation.size).toBeGreaterThan(50);

    // Security: without credentials every non-public operation answers 401; a write with the
    // cookie but without its CSRF token answers 403 csrf.
    // (Replayed as root or the owner: some sessions above have ended since.)
    for (const call of calls) {
      const operation = doc.paths[call.path]?.[call.method.toLowerCase()];
      if ((operation?.security ?? []).length === 0) continue;
      const anonymous = await send(call, { credentials: false });
      expect(anonymous.statusCode, `${call.method} ${call.url} without credentials`).toBe(401);
      if (operation?.security?.some((requirement) => 'csrf' in requirement)) {
        const forged = await send({ ...call, who: call.path.startsWith('/admin/') ? root : owner }, { csrf: false });
        expect(forged.statusCode, `${call.method} ${call.url} without the CSRF token`).toBe(403);
        expect(forged.json(), `${call.method} ${call.url}`).toMatchObject({ error: 'csrf' });
      }
    }
  });

  it('answers refusals in the Error schema, with the status of their code', async () => {
    await t.account('dora', 5);
    const { inviteToken } = await users(t).createOperator('viewer1', 'viewer', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    const viewer = await login(t, 'admin', 'viewer1');
    const { inviteToken: adminInvite } = await users(t).createOperator('admin2', 'admin', true);
    await users(t).acceptInvite(adminInvite ?? '', PASSWORD);
    const admin = await login(t, 'admin', 'admin2');
    const refused = async (call: Call, status: number, error: ApiErrorCode): Promise<void> => {
      const res = await send(call);
      expect(res.statusCode, `${call.method} ${call.url}: ${res.body}`).toBe(status);
      expect(res.json<{ error: string }>().error, `${call.method} ${call.url}`).toBe(error);
    };
    const A = '/admin/api/accounts';
    await refused({ method: 'POST', path: A, url: A, who: admin, payload: { username: 'bad name!' } }, 400, 'invalid-request');
    await refused({ method: 'POST', path: A, url: A, who: admin, payload: '{"username":', headers: { 'content-type': 'application/json' } }, 400, 'bad-request');
    await refused({ method: 'POST', path: A, url: A, who: admin, payload: JSON.stringify({ username: 'x'.repeat(2 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } }, 413, 'too-large');
    await refused({ method: 'POST', path: A, url: A, who: admin, payload: '<username>x</username>', headers: { 'content-type': 'application/xml' } }, 415, 'unsupported-media-type');
    await refused({ method: 'POST', path: A, url: A, who: viewer, payload: { username: 'eve' } }, 403, 'forbidden');
    await refused({ method: 'POST', path: A, url: A, who: admin, payload: { username: 'dora' } }, 409, 'already-exists');
    await refused({ method: 'GET', path: `${A}/{username}`, url: `${A}/nobody`, who: admin }, 404, 'not-found');
    await refused({ method: 'POST', path: `${A}/{username}/credits`, url: `${A}/dora/credits`, who: admin, payload: { operation: 'remove', amount: 6 } }, 409, 'insufficient-credits');
    await refused({ method: 'GET', path: '/admin/api/me', url: '/admin/api/me' }, 401, 'unauthorized');
    // An invite link needs a public base URL: with BASE_URL unset, a Host that is not a host name is a 400.
    await refused({ method: 'POST', path: `${A}/{username}/users`, url: `${A}/dora/users`, who: admin, payload: { name: 'dora-owner', role: 'owner' }, headers: { host: 'bad host!' } }, 400, 'bad-request');
  });

  it('gives every success an example that its own schema accepts', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, answer] of Object.entries(operation.responses)) {
          for (const [type, content] of Object.entries(answer.content ?? {})) {
            if (!status.startsWith('2')) continue;
            expect(content.example, `${method} ${path} ${status} ${type}`).toBeDefined();
            validate(content.schema, content.example, `the example of ${method.toUpperCase()} ${path} ${status} ${type}`);
          }
        }
      }
    }
  });
});
