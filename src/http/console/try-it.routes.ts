import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { formErrorOf } from './form-errors.js';
import type { AccountService } from '../../accounts/account.service.js';
import { freeReasonWords } from '../../accounts/ledger-queries.js';
import { Catalogue } from '../../catalogue/catalogue.js';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import { LookupError } from '../../lookup/lookup-error.js';
import type { LookupPipeline } from '../../lookup/lookup-pipeline.js';
import { jsonBodyOf } from '../../results/index.js';
import { ApiError } from '../auth/api-auth.js';
import { object, str } from '../api/api-schemas.js';
import { writeHttpResult } from '../lookup/asmx-http/asmx-http.plugin.js';
import { ownAccount } from './account.routes.js';
import type { ConsolePageOptions } from './console-context.js';
import type { Html } from './html.js';
import type { Account } from '../../accounts/account.js';
import { CSRF_FIELD } from './layout.js';
import type { TryItSamples } from './try-it-choices.js';
import { TRY_IT_PATH, TRY_IT_VALUE_MAX, tryItPage, type TryItOutcome } from './try-it-page.js';
import { ConnectionDelivery } from '../lookup/answer-delivery.js';

type Form = Record<string, string>;

export interface TryItPagesOptions extends ConsolePageOptions {
  readonly accounts: AccountService;
  /** The operations, the lookup pipeline and each operation's XML namespace. */
  readonly lookups: { readonly catalogue: Catalogue; readonly pipeline: LookupPipeline; readonly namespaceOf: (op: OperationDeclaration) => string };
  /** The notice of an empty or low balance, with the way to more credits (customer-pages.ts lowCreditNotice). */
  readonly credit: (account: Account) => Promise<Html | undefined>;
  /** The key each operation's fields are filled with when it is chosen (a test plate or the sample data's). */
  readonly samples: Pick<TryItSamples, 'of'>;
}

/** The customer's "Try it" page, under TRY_IT_PATH: one lookup through the pipeline, charged as the API charges it. */
export const tryItPages: FastifyPluginAsync<TryItPagesOptions> = (app, options) => {
  const { ctx } = options;
  const { catalogue, pipeline, namespaceOf } = options.lookups;
  const firstOperation = catalogue.operations[0];
  const chosen = (name: string | undefined): OperationDeclaration => {
    const op = name === undefined ? firstOperation : catalogue.find(name);
    if (!op) throw new ApiError(400, 'invalid-request', `Unknown operation ${name ?? ''}.`);
    return op;
  };

  app.get<{ Querystring: { operation?: string; switched?: string } }>('', { schema: { querystring: object({ operation: str(64), switched: str(1) }) } }, async (request, reply) => {
    const { principal, viewer } = await ctx.signIn(request, 'customer');
    const credit = await options.credit(await ownAccount(options, principal));
    const operation = chosen(request.query.operation);
    // Choosing an operation fills its fields with a key that answers (issue 26 item 6).
    const sample = await options.samples.of(operation);
    return (
      ctx.passwordFirst(viewer, reply) ??
      ctx.render(reply, tryItPage(viewer, { operations: catalogue.operations, operation, values: sample?.values ?? {}, credit, sample, switched: request.query.switched !== undefined }))
    );
  });

  // Parameter fields are named after the operation's parameters (any of the catalogue's), so the body is open: strings only, short.
  const tryItBody = { type: 'object', properties: { operation: str(64), [CSRF_FIELD]: str(100) }, required: ['operation'], additionalProperties: str(TRY_IT_VALUE_MAX) };
  app.post<{ Body: Form }>('', { schema: { body: tryItBody }, attachValidation: true }, async (request, reply) => {
    // A member may run it: it reads data and spends credits exactly as the account's API keys do,
    // which every user of the account may hold; no account setting changes.
    const { principal, viewer } = await ctx.signIn(request, 'customer');
    const account = await ownAccount(options, principal);
    const operation = chosen(request.body.operation);
    // The select and the fields share one form: "Choose", or a run after the select changed to
    // another operation than the one whose fields were shown, opens the chosen one's fields and
    // runs nothing, whether or not the browser ran the page's script (issue 26 item 6). "Choose"
    // on the operation already shown runs it (Enter in a field presses the form's first button).
    const { shown, choose } = request.body;
    if (shown !== undefined && shown !== operation.name) {
      const switched = choose === undefined ? '&switched=1' : '';
      return reply.redirect(`${TRY_IT_PATH}?operation=${encodeURIComponent(operation.name)}${switched}`, 303);
    }
    const values: Record<string, string> = {};
    for (const parameter of Catalogue.inputParameters(operation)) {
      const value = request.body[parameter.name];
      if (value !== undefined) values[parameter.name] = value;
    }
    // An over-long value: the form again at its field, nothing run (issue 26 item 10).
    const refused = formErrorOf('try', request.body, request.validationError as FastifyError | undefined, undefined, Object.fromEntries(Object.keys(values).map((name) => [name, name])));
    if (refused) {
      const credit = await options.credit(account);
      return ctx.render(reply, tryItPage(viewer, { operations: catalogue.operations, operation, values, error: refused, credit }), 400);
    }
    let outcome: TryItOutcome;
    try {
      // The session authenticated a user of this account (cookie, CSRF token, role above), so the
      // pipeline is told who it is instead of being shown a key the console never holds.
      const done = await pipeline.execute({
        call: { operation, args: { ...values, username: account.username } },
        // The user is named on the lookup's ledger row (issue 33).
        auth: { mode: 'session', username: account.username, userId: principal.user.id },
        interface: 'console',
        requestId: request.id,
        // Paid only if the answer can be written to this connection (issue 31).
        delivery: new ConnectionDelivery(request.raw, reply.raw),
        baseUrl: ctx.baseUrl(request),
      });
      outcome = {
        ok: true,
        json: JSON.stringify(jsonBodyOf(done.result), null, 2),
        xml: writeHttpResult(done.result, namespaceOf(operation)),
        charged: done.charged,
        balance: done.balance,
        // The reason the pipeline gave the lookup's free ledger row (an account's lookup that cost nothing always has one).
        free: done.charged === 0 ? freeReasonWords(done.free) : null,
      };
    } catch (error) {
      if (!(error instanceof LookupError)) throw error;
      outcome = { ok: false, error: error.message };
    }
    // The balance after this lookup decides the notice.
    const credit = await options.credit(await ownAccount(options, principal));
    const sample = await options.samples.of(operation);
    return ctx.render(reply, tryItPage(viewer, { operations: catalogue.operations, operation, values, outcome, credit, sample }), outcome.ok ? 200 : 422);
  });
  return Promise.resolve();
};
