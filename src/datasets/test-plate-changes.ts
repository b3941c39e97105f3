import type { Actor } from '../audit/audit-log.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import { DomainError } from '../shared/domain-error.js';
import { testPlateKey } from './test-plate-key.js';
import type { TestPlates } from './test-plates.js';

/** A test plate as the admin API and the console name it: the operation and its normalised key. */
export interface TestPlate {
  readonly operation: string;
  readonly key: string;
}

/** A test plate change that cannot be made; each adapter maps the code to its own answer. */
export class TestPlateError extends DomainError<'INVALID' | 'NOT_FOUND' | 'ALREADY_EXISTS'> {
  override readonly name = 'TestPlateError';
}

/** What a change of the test plates needs: the catalogue (to normalise) and the service lookups read. */
export interface TestPlateChangeDeps {
  readonly catalogue: Catalogue;
  readonly testPlates: Pick<TestPlates, 'add' | 'remove'>;
}

function plateOf(catalogue: Catalogue, operation: string, values: readonly string[]): TestPlate {
  const outcome = testPlateKey(catalogue, operation, values);
  if (!outcome.ok) throw new TestPlateError('INVALID', outcome.reason);
  return { operation, key: outcome.key };
}

/**
 * The one way an operator changes the test plates through the admin API or the console: the key
 * values normalised as a lookup normalises them, then the change, which TestPlates writes with its
 * audit row in one transaction. Adding a plate that is free already changes and records nothing.
 */
export async function addTestPlate(deps: TestPlateChangeDeps, actor: Actor, operation: string, values: readonly string[]): Promise<TestPlate> {
  const plate = plateOf(deps.catalogue, operation, values);
  // A plate that is free already is a create that found its row (issue 28: one 201, then 409s).
  if (!(await deps.testPlates.add(plate.operation, plate.key, actor))) throw new TestPlateError('ALREADY_EXISTS', `${plate.operation} ${plate.key} is a test plate already`);
  return plate;
}

/** Makes a test plate cost credits again; NOT_FOUND when it was not one. */
export async function removeTestPlate(deps: TestPlateChangeDeps, actor: Actor, operation: string, values: readonly string[]): Promise<TestPlate> {
  const plate = plateOf(deps.catalogue, operation, values);
  if (!(await deps.testPlates.remove(plate.operation, plate.key, actor))) throw new TestPlateError('NOT_FOUND', `${plate.operation} ${plate.key} is not a test plate`);
  return plate;
}
