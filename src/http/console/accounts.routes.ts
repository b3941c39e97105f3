import type { FastifyError, FastifyPluginAsync } from 'fastify';
import type { Viewer } from './layout.js';
import type { Account } from '../../accounts/account.js';
import { formErrorOf, type FormError } from './form-errors.js';
import { MAX_RATE_PER_DAY, MAX_RATE_PER_SECOND } from '../../accounts/account.service.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { UserService } from '../../users/user.service.js';
import { actorOf, requireWrite } from '../auth/api-auth.js';
import { accountCreateBody, int, object, str, usernameParams } from '../api/api-schemas.js';
import { secretShown } from './account-sections.js';
import { accountView, backToAccount, doneNotice, ledgerQs, type AccountViewDeps, type LedgerQs } from './account-view.js';
import type { ConsolePageOptions } from './console-context.js';
import { accountCreatedPage, accountPaths, accountsPage, operatorAccountPage } from './operator-pages.js';

export interface AccountsPagesOptions extends ConsolePageOptions, AccountViewDeps {
  readonly users: UserService;
  readonly audit: AuditLog;
}

/** What the operator's page of an account is read from. */
export interface OperatorAccountDeps extends AccountViewDeps {
  readonly users: Pick<UserService, 'list'>;
  readonly audit: Pick<AuditLog, 'list'>;
}

/** The operator's page of an account, with a notice or a form shown again with its error. */
export async function operatorAccountHtml(deps: OperatorAccountDeps, viewer: Viewer, username: string, query: LedgerQs, extra: { notice?: ((account: Account) => string | undefined) | undefined; error?: FormError | undefined } = {}): Promise<string> {
  const account = await deps.accounts.show(username);
  const [view, users, audit] = await Promise.all([accountView(deps, account, query), deps.users.list(account.id), deps.audit.list({ targetKind: 'account', target: account.username, limit: 20 })]);
  return operatorAccountPage(viewer, { ...view, users, audit, error: extra.error, notice: extra.notice?.(account) });
}

/** Page size and paging of the account list. */
const listQuery = object({ search: str(64), offset: int(0, 1_000_000_000) });
const nullableRate = (max: number) => ({ anyOf: [{ type: 'integer', minimum: 0, maximum: max }, { type: 'string', maxLength: 0 }] });

/**
 * Every account, for operators, under `/console/admin/accounts`: the list, a new account, an
 * account's page, its status and settings. The same service calls as the admin API's `/accounts`.
 */
export const accountsPages: FastifyPluginAsync<AccountsPagesOptions> = (app, options) => {
  const { ctx } = options;
  const service = (...args: Parameters<typeof actorOf>) => options.accounts.withActor(actorOf(...args));

  const listHtml = async (viewer: Viewer, query: { search?: string; offset?: number }, error?: FormError) => {
    const { search = '', offset = 0 } = query;
    const limit = 50;
    const { accounts, total } = await options.accounts.list({ search, limit, offset });
    return accountsPage(viewer, { accounts, total, search, offset, limit, error });
  };
  app.get<{ Querystring: { search?: string; offset?: number } }>('', { schema: { querystring: listQuery }, attachValidation: true }, async (request, reply) => {
    const { viewer } = await ctx.signIn(request, 'operator');
    // An over-long search comes back at its field, typed, over the whole list (issue 26 item 10).
    const refused = formErrorOf('search', request.query, request.validationError as FastifyError | undefined);
    if (refused) return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, await listHtml(viewer, {}, refused), 400);
    return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, await listHtml(viewer, request.query));
  });

  // A refused value shows the list again with the form, its values and the message by the field.
  app.post<{ Body: { username: string; credits?: number } }>('', { schema: { body: ctx.formOf(accountCreateBody) }, attachValidation: true }, async (request, reply) => {
    const { principal, viewer } = await ctx.signIn(request, 'operator');
    requireWrite(principal);
    let created;
    try {
      if (request.validationError) throw request.validationError;
      created = await service(principal, request).create(request.body.username, request.body.credits ?? 0);
    } catch (thrown) {
      const error = formErrorOf('create', request.body, request.validationError as FastifyError | undefined, thrown);
      if (!error) throw thrown;
      return ctx.render(reply, await listHtml(viewer, {}, error), 400);
    }
    const { account, apiKey } = created;
    const back = accountPaths(account.username).page;
    return ctx.render(reply, accountCreatedPage(viewer, secretShown(`Account ${account.username} is created with ${account.credits} credits and its first API key.`, account.username, apiKey, ctx.baseUrl(request), back)), 201);
  });

  app.get<{ Params: { username: string }; Querystring: LedgerQs & { done?: string; amount?: number } }>(
    '/:username',
    { schema: { params: usernameParams, querystring: object({ ...(ledgerQs.properties as Record<string, Record<string, unknown>>), done: str(32), amount: int(1, Number.MAX_SAFE_INTEGER) }) } },
    async (request, reply) => {
      const { viewer } = await ctx.signIn(request, 'operator');
      const { done, amount, ...query } = request.query;
      const notice = done === undefined ? undefined : (account: Account) => doneNotice(done, account, amount);
      return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, await operatorAccountHtml(options, viewer, request.params.username, query, { notice }));
    },
  );

  app.post<{ Params: { username: string }; Body: { disabled: boolean } }>(
    '/:username/status',
    { schema: { params: usernameParams, body: ctx.form({ disabled: { type: 'boolean' } }, ['disabled']) } },
    async (request, reply) => {
      const { principal } = await ctx.signIn(request, 'operator');
      requireWrite(principal);
      await service(principal, request).setDisabled(request.params.username, request.body.disabled);
      return backToAccount(reply, request.params.username, request.body.disabled ? 'disabled' : 'enabled');
    },
  );

  app.post<{ Params: { username: string }; Body: { requireApiKey: boolean; perSecond?: number | ''; perDay?: number | '' } }>(
    '/:username/settings',
    { schema: { params: usernameParams, body: ctx.form({ requireApiKey: { type: 'boolean' }, perSecond: nullableRate(MAX_RATE_PER_SECOND), perDay: nullableRate(MAX_RATE_PER_DAY) }, ['requireApiKey']) } },
    async (request, reply) => {
      const { principal } = await ctx.signIn(request, 'operator');
      requireWrite(principal);
      const accounts = service(principal, request);
      const { username } = request.params;
      const { requireApiKey, perSecond, perDay } = request.body;
      const rate = (value: number | '' | undefined): number | null => (value === '' || value === undefined ? null : value);
      await accounts.setRequireApiKey(username, requireApiKey);
      await accounts.setRateLimits(username, { perSecond: rate(perSecond), perDay: rate(perDay) });
      return backToAccount(reply, username, 'saved');
    },
  );
  return Promise.resolve();
};
