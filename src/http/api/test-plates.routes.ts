import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Catalogue } from '../../catalogue/catalogue.js';
import { addTestPlate, removeTestPlate, TestPlateError } from '../../datasets/test-plate-changes.js';
import type { TestPlates } from '../../datasets/test-plates.js';
import { actorOf, ApiError, requireWrite } from '../auth/api-auth.js';
import { principalOf } from '../auth/api-principal.js';
import { object, str } from './api-schemas.js';
import { adminAnswers } from './api-responses.js';

export interface TestPlatesRoutesOptions {
  /** The free test plates (the CLI's `test-plates` commands use the same service). */
  readonly testPlates: Pick<TestPlates, 'add' | 'remove' | 'list'>;
  /** Normalises a test plate's key values as a lookup does. */
  readonly catalogue: Catalogue;
}

const TAG = 'admin: operations';

/** The free test plates, under `/test-plates`: they answer and cost no credit. */
export const testPlatesRoutes: FastifyPluginAsync<TestPlatesRoutesOptions> = (app, options) => {
  const plateBody = object({ operation: str(64), values: { type: 'array', items: str(64, { minLength: 1 }), minItems: 1, maxItems: 4 } }, ['operation', 'values']);
  // The console changes test plates through the same function (src/datasets/test-plate-changes.ts).
  const plateChange = async (request: FastifyRequest, change: typeof addTestPlate, body: { operation: string; values: string[] }) => {
    requireWrite(principalOf(request));
    try {
      return await change(options, actorOf(principalOf(request), request), body.operation, body.values);
    } catch (error) {
      // An invalid key names its field; every other code answers as the domain table says.
      if (error instanceof TestPlateError && error.code === 'INVALID') throw new ApiError(400, 'invalid-request', `body: ${error.message}`, 'values');
      throw error;
    }
  };
  app.get('', { schema: { tags: [TAG], summary: 'The free test plates: they answer and cost no credit', response: { 200: adminAnswers.plates } } }, async () => ({
    plates: (await options.testPlates.list()).map((p) => ({ operation: p.operation, key: p.lookupKey })),
  }));
  app.post<{ Body: { operation: string; values: string[] } }>(
    '',
    { schema: { tags: [TAG], summary: 'Make a plate free: its key values in parameter order, normalised as a lookup does', body: plateBody, response: { 201: adminAnswers.plate } } },
    async (request, reply) => reply.code(201).send(await plateChange(request, addTestPlate, request.body)),
  );
  app.delete<{ Body: { operation: string; values: string[] } }>(
    '',
    { schema: { tags: [TAG], summary: 'Make a test plate cost credits again', body: plateBody, response: { 200: adminAnswers.removedPlate } } },
    async (request) => ({ ...(await plateChange(request, removeTestPlate, request.body)), removed: true }),
  );
  return Promise.resolve();
};
