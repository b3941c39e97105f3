import type { FastifyPluginAsync } from 'fastify';
import type { AccountService } from '../../accounts/account.service.js';
import type { User, UserService } from '../../users/user.service.js';
import { actorOf, requireWrite } from '../auth/api-auth.js';
import { principalOf } from '../auth/api-principal.js';
import { baseUrlOf } from '../base-url.js';
import { userInviteBody, usernameParams } from './api-schemas.js';
import { adminAnswers } from './api-responses.js';

/** A user as the APIs show it (never a password hash or a session). */
export function describeUser(user: User): Record<string, unknown> {
  return { id: user.id, name: user.name, role: user.role, account: user.account, active: user.active, mustChangePassword: user.mustChangePassword, disabled: user.disabled, createdAt: user.createdAt };
}

export interface AccountUsersOptions {
  readonly accounts: AccountService;
  readonly users: UserService;
  /** Public base URL for invite links; default: from the request. */
  readonly baseUrl?: string | undefined;
}

const TAG = 'admin: accounts';

/** An account's customer users and their invites, under `/accounts/:username/users`. */
export const accountUsersRoutes: FastifyPluginAsync<AccountUsersOptions> = (app, options) => {
  app.get<{ Params: { username: string } }>('', { schema: { tags: [TAG], summary: "The account's customer users", params: usernameParams, response: { 200: adminAnswers.users } } }, async (request) => {
    const account = await options.accounts.show(request.params.username);
    return { users: (await options.users.list(account.id)).map(describeUser) };
  });

  app.post<{ Params: { username: string }; Body: { name: string; role: 'owner' | 'member' } }>(
    '',
    { schema: { tags: [TAG], summary: 'Invite a customer user: answers the one-time invite link', errorStatuses: [409], params: usernameParams, body: userInviteBody, response: { 201: adminAnswers.invited } } },
    async (request, reply) => {
      const principal = principalOf(request);
      requireWrite(principal);
      const { user, inviteToken } = await options.users.withActor(actorOf(principal, request)).createCustomer(request.params.username, request.body.name, request.body.role);
      const inviteUrl = `${baseUrlOf(request, options.baseUrl)}/account/invite#${inviteToken}`;
      return reply.code(201).header('cache-control', 'no-store').send({ user: describeUser(user), inviteToken, inviteUrl });
    },
  );
  return Promise.resolve();
};

/** The operator users, under `/operators`. */
export const operatorUsersRoutes: FastifyPluginAsync<Pick<AccountUsersOptions, 'users'>> = (app, options) => {
  app.get('', { schema: { tags: ['admin: operators'], summary: 'Operator users', response: { 200: adminAnswers.users } } }, async () => ({ users: (await options.users.list(null)).map(describeUser) }));
  return Promise.resolve();
};
