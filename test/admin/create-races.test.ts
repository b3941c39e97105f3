import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { operator, type Login } from './admin-harness.js';

/**
 * Issue 28: identical creates racing each other, spread over two app instances on one store (on
 * PostgreSQL the check-then-insert of each sees no row and the unique index refuses all but one
 * insert). Whichever request wins, exactly one answers 201, every other one 409, and one row is
 * left: never a 500.
 */
const RACERS = 8;

describe.each(await enginesToTest())('concurrent identical creates on %s (two instances, one store)', (engine) => {
  let t: TestApp;
  let second: BuiltApp;
  let root: Login;

  beforeAll(async () => {
    t = await createTestApp({ SIGNUP_ENABLED: 'true', SIGNUP_PER_ADDRESS_PER_DAY: '1000' }, undefined, engine);
    second = await buildApp(t.config);
    root = await operator(t, 'root');
    await t.account('holder', 0);
  });
  afterAll(async () => {
    await second.app.close();
    await t.close();
  });

  /** The same request RACERS times at once, alternately on each instance; the statuses sorted. */
  async function race(method: 'POST' | 'PUT', url: string, payload: Record<string, unknown>, signedIn = true): Promise<number[]> {
    const answers: LightMyRequestResponse[] = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        (i % 2 === 0 ? t.app : second.app).inject({
          method,
          url,
          payload,
          headers: signedIn ? { cookie: root.cookie, 'x-csrf-token': root.csrf } : {},
        }),
      ),
    );
    for (const answer of answers) expect(answer.statusCode === 201 || answer.json<{ error: string }>().error === 'already-exists', answer.body).toBe(true);
    return answers.map((a) => a.statusCode).sort();
  }
  const ONE_CREATED = [201, ...Array.from({ length: RACERS - 1 }, () => 409)];
  const count = async (query: Promise<Array<{ n: number | string | bigint }>>): Promise<number> => Number((await query)[0]?.n);
  const db = () => t.services.storage.db;

  it('accounts', async () => {
    expect(await race('POST', '/admin/api/accounts', { username: 'racer' })).toEqual(ONE_CREATED);
    expect(await count(db().selectFrom('accounts').select((eb) => eb.fn.countAll().as('n')).where('username', '=', 'racer').execute())).toBe(1);
  });

  it('users invited to an account', async () => {
    expect(await race('POST', '/admin/api/accounts/holder/users', { name: 'amy', role: 'member' })).toEqual(ONE_CREATED);
    expect(await count(db().selectFrom('users').select((eb) => eb.fn.countAll().as('n')).where('name', '=', 'amy').execute())).toBe(1);
  });

  it('API keys by name', async () => {
    expect(await race('POST', '/admin/api/accounts/holder/keys', { name: 'ci' })).toEqual(ONE_CREATED);
    expect(await count(db().selectFrom('api_keys').select((eb) => eb.fn.countAll().as('n')).where('name', '=', 'ci').execute())).toBe(1);
  });

  it('operator tokens', async () => {
    expect(await race('POST', '/admin/api/tokens', { name: 'deploy', scope: 'read' })).toEqual(ONE_CREATED);
    expect(await count(db().selectFrom('operator_tokens').select((eb) => eb.fn.countAll().as('n')).where('name', '=', 'deploy').execute())).toBe(1);
  });

  it('webhook endpoints', async () => {
    expect(await race('POST', '/admin/api/accounts/holder/webhooks', { url: 'https://hooks.example.org/race', enabled: false })).toEqual(ONE_CREATED);
    expect(await count(db().selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll().as('n')).where('url', '=', 'https://hooks.example.org/race').execute())).toBe(1);
  });

  it('test plates', async () => {
    expect(await race('POST', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['RA123CE'] })).toEqual(ONE_CREATED);
    expect(await count(db().selectFrom('test_plates').select((eb) => eb.fn.countAll().as('n')).where('operation', '=', 'CheckFrance').execute())).toBe(1);
  });

  it('sign-ups', async () => {
    expect(await race('POST', '/account/api/signup', { username: 'newbie', password: 'a long enough password' }, false)).toEqual(ONE_CREATED);
    expect(await count(db().selectFrom('accounts').select((eb) => eb.fn.countAll().as('n')).where('username', '=', 'newbie').execute())).toBe(1);
  });
});
