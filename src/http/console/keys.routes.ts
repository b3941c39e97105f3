import type { FastifyError, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { formErrorOf, type FormError } from './form-errors.js';
import type { AccountService } from '../../accounts/account.service.js';
import { actorOf, requireWrite, type Principal } from '../auth/api-auth.js';
import { int, keyCreateBody, object, str, USERNAME, usernameParams } from '../api/api-schemas.js';
import { AccountError } from '../../accounts/account.service.js';
import { KeyRuleError, parseLabel, type CapPeriod, type KeySettingsChange } from '../../accounts/key-rules.js';
import { secretShown } from './account-sections.js';
import type { Audience, ConsolePageOptions } from './console-context.js';
import { html } from './html.js';
import { page, type Viewer } from './layout.js';

export interface KeyPagesOptions extends ConsolePageOptions {
  readonly accounts: AccountService;
  readonly audience: Audience;
  /** The account's username: the session's own (customers) or the path's (operators). */
  readonly account: (principal: Principal, request: FastifyRequest) => Promise<string>;
  /** The account's page, where the forms are and the pages link back to. */
  readonly back: (username: string) => string;
  /** The account's page with the key form shown again with its error (issue 26 item 3). */
  readonly formPage: (viewer: Viewer, username: string, error: FormError) => Promise<string>;
}

const ID = int(1, 2 ** 31 - 1);

/** The rules form of a key (account-sections.ts keySettingsForm): text fields, an empty one removes its rule. */
interface KeySettingsForm {
  cap?: string;
  capPeriod?: CapPeriod;
  operations?: string;
  perSecond?: string;
  perDay?: string;
  allowedIps?: string;
  labels?: string;
}

const KEY_SETTINGS_FORM = {
  cap: str(12),
  capPeriod: { type: 'string', enum: ['day', 'month', 'total'] },
  operations: str(4000),
  perSecond: str(12),
  perDay: str(12),
  allowedIps: str(4000),
  labels: str(4000),
};

const items = (text: string | undefined): string[] =>
  (text ?? '')
    .split(/[,\n]/)
    .map((v) => v.trim())
    .filter((v) => v !== '');

function whole(text: string | undefined, what: string): number | null {
  const value = (text ?? '').trim();
  if (value === '') return null;
  if (!/^\d+$/.test(value)) throw new AccountError('INVALID', `${what} must be a whole number`);
  return Number(value);
}

/** Every rule of the form: what it says, an empty field clearing its rule. */
function settingsOfForm(form: KeySettingsForm): KeySettingsChange {
  const cap = whole(form.cap, 'the credit cap');
  const operations = items(form.operations);
  const allowedIps = items(form.allowedIps);
  const labels: Record<string, string> = {};
  try {
    for (const text of items(form.labels)) {
      const [key, value] = parseLabel(text);
      labels[key] = value;
    }
  } catch (error) {
    if (error instanceof KeyRuleError) throw new AccountError('INVALID', error.message);
    throw error;
  }
  return {
    cap: cap === null ? null : { credits: cap, period: form.capPeriod ?? 'month' },
    operations: operations.length === 0 ? null : operations,
    perSecond: whole(form.perSecond, 'the per-second limit'),
    perDay: whole(form.perDay, 'the per-day limit'),
    allowedIps: allowedIps.length === 0 ? null : allowedIps,
    labels,
  };
}

/**
 * Create, roll and revoke keys, under `{account}/keys`: the same service calls as the API's key
 * routes (src/http/api/keys.routes.ts); registered for the customer's own account and for any
 * account on the operator side.
 */
export const keyPages: FastifyPluginAsync<KeyPagesOptions> = (app, options) => {
  const { ctx, audience } = options;
  const accountParams = audience === 'operator' ? { params: usernameParams } : {};
  const params = audience === 'operator' ? object({ username: USERNAME, id: ID }, ['username', 'id']) : object({ id: ID }, ['id']);
  const service = (principal: Principal, request: FastifyRequest) => options.accounts.withActor(actorOf(principal, request));

  app.post<{ Body: { name: string } }>('', { schema: { ...accountParams, body: ctx.formOf(keyCreateBody) }, attachValidation: true }, async (request, reply) => {
    const { principal, viewer } = await ctx.signIn(request, audience);
    requireWrite(principal);
    const username = await options.account(principal, request);
    let created;
    try {
      if (request.validationError) throw request.validationError;
      created = await service(principal, request).createKey(username, request.body.name);
    } catch (thrown) {
      const error = formErrorOf('key', request.body, request.validationError as FastifyError | undefined, thrown);
      if (!error) throw thrown;
      return ctx.render(reply, await options.formPage(viewer, username, error), 400);
    }
    const { key, apiKey } = created;
    return ctx.render(reply, page(`Key ${key.name} created`, secretShown(`The new key ${key.name} works now.`, username, apiKey, ctx.baseUrl(request), options.back(username)), viewer), 201);
  });
  app.post<{ Params: { id: number }; Body: KeySettingsForm }>('/:id/settings', { schema: { params, body: ctx.form(KEY_SETTINGS_FORM) }, attachValidation: true }, async (request, reply) => {
    const { principal, viewer } = await ctx.signIn(request, audience);
    requireWrite(principal);
    const username = await options.account(principal, request);
    try {
      if (request.validationError) throw request.validationError;
      await service(principal, request).updateKey(username, request.params.id, settingsOfForm(request.body));
    } catch (thrown) {
      // Shown at the key form, with the rule's own message (the same service check as the API's).
      const error = formErrorOf('key', {}, request.validationError as FastifyError | undefined, thrown);
      if (!error) throw thrown;
      return ctx.render(reply, await options.formPage(viewer, username, error), 400);
    }
    return reply.redirect(`${options.back(username)}${audience === 'operator' ? '?done=saved' : ''}`, 303);
  });
  app.post<{ Params: { id: number } }>('/:id/roll', { schema: { params, body: ctx.form({}) } }, async (request, reply) => {
    const { principal, viewer } = await ctx.signIn(request, audience);
    requireWrite(principal);
    const username = await options.account(principal, request);
    const rolled = await service(principal, request).rollKey(username, request.params.id);
    const until = rolled.old.expiresAt === null ? '' : ` until ${rolled.old.expiresAt.slice(0, 16).replace('T', ' ')} UTC`;
    return ctx.render(reply, page(`Key ${rolled.key.name} rolled`, html`${secretShown(`This is the new key. The old one keeps working${until}, so clients can switch over.`, username, rolled.apiKey, ctx.baseUrl(request), options.back(username))}`, viewer));
  });
  app.post<{ Params: { id: number } }>('/:id/revoke', { schema: { params, body: ctx.form({}) } }, async (request, reply) => {
    const { principal } = await ctx.signIn(request, audience);
    requireWrite(principal);
    const username = await options.account(principal, request);
    await service(principal, request).revokeKey(username, request.params.id);
    return reply.redirect(`${options.back(username)}${audience === 'operator' ? '?done=revoked' : ''}`, 303);
  });
  return Promise.resolve();
};
