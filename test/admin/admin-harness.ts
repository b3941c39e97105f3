import type { LightMyRequestResponse } from 'fastify';
import { UserService, type CustomerRole, type OperatorRole } from '../../src/users/user.service.js';
import type { BuiltApp } from '../../src/app.js';

/** What the helpers use of an app: a TestApp, or an app a suite built itself (buildApp). */
type AnyApp = Pick<BuiltApp, 'app' | 'services'>;

export const PASSWORD = 'correct horse battery staple';

/** A logged-in user's credentials: the session cookie and its CSRF token. */
export interface Login {
  readonly cookie: string;
  readonly csrf: string;
}

export function users(t: AnyApp): UserService {
  return new UserService(t.services.storage, { now: () => new Date() }, t.services.audit, t.services.accounts);
}

export async function login(t: AnyApp, api: 'admin' | 'account', username: string, password = PASSWORD): Promise<Login> {
  const res = await t.app.inject({ method: 'POST', url: `/${api}/api/login`, payload: { username, password } });
  if (res.statusCode !== 200) throw new Error(`login of ${username} failed: ${res.statusCode} ${res.body}`);
  const cookie = String(res.headers['set-cookie']).split(';', 1)[0] ?? '';
  return { cookie, csrf: (res.json<{ csrfToken: string }>()).csrfToken };
}

/** An operator with a password set from an invite, logged in. */
export async function operator(t: AnyApp, name: string, role: OperatorRole = 'admin'): Promise<Login> {
  const { inviteToken } = await users(t).createOperator(name, role, true);
  await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
  return login(t, 'admin', name);
}

/** A customer user of `account`, invited by an operator, logged in. */
export async function customer(t: AnyApp, account: string, name: string, role: CustomerRole = 'owner'): Promise<Login> {
  const { inviteToken } = await users(t).createCustomer(account, name, role);
  await users(t).acceptInvite(inviteToken, PASSWORD);
  return login(t, 'account', name);
}

/** A request as a logged-in user; writes carry the CSRF token unless `csrf` is false. */
export function as(t: AnyApp, who: Login) {
  return (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown, csrf = true): Promise<LightMyRequestResponse> =>
    t.app.inject({
      method,
      url,
      headers: { cookie: who.cookie, ...(csrf && method !== 'GET' ? { 'x-csrf-token': who.csrf } : {}) },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
}

export const FRANCE = {
  operation: 'CheckFrance',
  key: { RegistrationNumber: 'EG258MA' },
  vehicle: { Description: 'Peugeot 208 Allure', RegistrationYear: '2019', CarMake: { CurrentTextValue: 'PEUGEOT' }, CarModel: { CurrentTextValue: '208' } },
};
