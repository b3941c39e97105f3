import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { actorOf, ApiError, requireWrite } from '../auth/api-auth.js';
import { object, str, type Schema } from '../api/api-schemas.js';
import { Catalogue } from '../../catalogue/catalogue.js';
import { addTestPlate, removeTestPlate, TestPlateError, type TestPlateChangeDeps } from '../../datasets/test-plate-changes.js';
import type { TestPlates } from '../../datasets/test-plates.js';
import type { ConsolePageOptions } from './console-context.js';
import { CSRF_FIELD } from './layout.js';
import { PLATE_VALUE_MAX, TEST_PLATES_PATH, testPlatesPage, valueField } from './test-plate-pages.js';
import { formErrorOf, type FormError } from './form-errors.js';

/** The test plates service and what a change needs (the admin API's `/test-plates` routes use the same). */
export interface TestPlatePagesOptions extends ConsolePageOptions, TestPlateChangeDeps {
  readonly testPlates: Pick<TestPlates, 'add' | 'remove' | 'list'>;
}

type PlateForm = Record<string, string | undefined> & { operation: string };

/** The add and remove forms: the operation, the CSRF field, and one short value per key parameter (at most four). */
const plateForm: Schema = {
  type: 'object',
  properties: { operation: str(64, { minLength: 1 }), [CSRF_FIELD]: str(100) },
  required: ['operation'],
  propertyNames: { anyOf: [{ enum: ['operation', CSRF_FIELD] }, { pattern: '^value_[A-Za-z0-9_]{1,64}$' }] },
  additionalProperties: str(PLATE_VALUE_MAX),
  maxProperties: 6,
};

const DONE: Readonly<Record<string, string>> = { added: 'The test plate is added: its lookups cost nothing now.', removed: 'The test plate is removed: its lookups cost credits again.' };

/** Operators' test plates page (issue 18), under TEST_PLATES_PATH: list, add, remove through addTestPlate/removeTestPlate, as the admin API. */
export const testPlatePages: FastifyPluginAsync<TestPlatePagesOptions> = (app, deps) => {
  const { ctx } = deps;
  const operations = deps.catalogue.operations.filter((op) => Catalogue.keyParameters(op).length > 0);
  const chosen = (name: string | undefined) => {
    const op = name === undefined ? operations[0] : operations.find((o) => o.name === name);
    if (!op) throw new ApiError(400, 'invalid-request', `${name ?? 'The catalogue'} has no operation with test plates.`);
    return op;
  };
  /** The key values in parameter order, as the admin API takes them. */
  const valuesOf = (body: PlateForm): string[] => {
    const op = deps.catalogue.find(body.operation);
    return op ? Catalogue.keyParameters(op).map((p) => body[valueField(p.name)] ?? '') : [];
  };

  app.get<{ Querystring: { operation?: string; done?: string } }>('', { schema: { querystring: object({ operation: str(64), done: str(32) }) } }, async (request, reply) => {
    const { viewer } = await ctx.signIn(request, 'operator');
    const plates = await deps.testPlates.list();
    const notice = request.query.done === undefined ? undefined : DONE[request.query.done];
    return ctx.passwordFirst(viewer, reply) ?? ctx.render(reply, testPlatesPage(viewer, { plates, operations, operation: chosen(request.query.operation), notice }));
  });

  app.post<{ Body: PlateForm }>('', { schema: { body: plateForm }, attachValidation: true }, async (request, reply) => {
    const { principal, viewer } = await ctx.signIn(request, 'operator');
    requireWrite(principal);
    /** Shown again with what was typed: an over-long value at its field (issue 26 item 10), a refused plate above them. */
    const again = async (error: FormError, status: number) => {
      const operation = chosen(request.body.operation);
      const values = Object.fromEntries(Catalogue.keyParameters(operation).map((p) => [p.name, request.body[valueField(p.name)]]));
      return ctx.render(reply, testPlatesPage(viewer, { plates: await deps.testPlates.list(), operations, operation, values, error }), status);
    };
    const labels = Object.fromEntries(operations.flatMap((op) => Catalogue.keyParameters(op).map((p) => [valueField(p.name), p.name])));
    const refused = formErrorOf('plate', request.body, request.validationError as FastifyError | undefined, undefined, labels);
    if (refused) return again(refused, 400);
    try {
      const plate = await addTestPlate(deps, actorOf(principal, request), request.body.operation, valuesOf(request.body));
      return await reply.redirect(`${TEST_PLATES_PATH}?${new URLSearchParams({ operation: plate.operation, done: 'added' }).toString()}`, 303);
    } catch (error) {
      if (!(error instanceof TestPlateError && (error.code === 'INVALID' || error.code === 'ALREADY_EXISTS'))) throw error;
      return again({ form: 'plate', field: undefined, text: `Not added: ${error.message}.`, values: {} }, error.code === 'INVALID' ? 400 : 409);
    }
  });

  app.post<{ Body: PlateForm }>('/remove', { schema: { body: plateForm } }, async (request, reply) => {
    const { principal } = await ctx.signIn(request, 'operator');
    requireWrite(principal);
    const plate = await removeTestPlate(deps, actorOf(principal, request), request.body.operation, valuesOf(request.body));
    return reply.redirect(`${TEST_PLATES_PATH}?${new URLSearchParams({ operation: plate.operation, done: 'removed' }).toString()}`, 303);
  });
  return Promise.resolve();
};
