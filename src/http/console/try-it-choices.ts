import { Catalogue, splitKey } from '../../catalogue/catalogue.js';
import { vinRule } from '../../catalogue/input-rules.js';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import type { TestPlates } from '../../datasets/test-plates.js';
import { sampleParameterExamples, type ParameterExamples } from '../lookup/json/openapi-document.js';

/** One `<optgroup>` of Try it's select: a country's operations, or those tied to none. */
export interface OperationGroup {
  readonly label: string;
  readonly operations: readonly OperationDeclaration[];
}

const BY_VIN = 'By VIN';
const BY_MAKE = 'By make and model';

/** The group of an operation: its country; else whether it looks up a VIN or searches by make and model. */
function groupOf(op: OperationDeclaration): string {
  if (op.country !== undefined) return op.country;
  return Catalogue.inputParameters(op).some((p) => p.rule === vinRule) ? BY_VIN : BY_MAKE;
}

/**
 * The operations grouped as a person looks for them (issue 26 item 6): by country, countries in
 * alphabetical order, then the lookups by VIN and by make and model; catalogue order within a group.
 */
export function operationGroups(operations: readonly OperationDeclaration[]): OperationGroup[] {
  const groups = new Map<string, OperationDeclaration[]>();
  for (const op of operations) {
    const label = groupOf(op);
    groups.set(label, [...(groups.get(label) ?? []), op]);
  }
  const rank = (label: string): number => (label === BY_VIN ? 1 : label === BY_MAKE ? 2 : 0);
  return [...groups.entries()]
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b, 'en'))
    .map(([label, ops]) => ({ label, operations: ops }));
}

/** Values that fill an operation's fields, and where they come from. */
export interface TryItSample {
  /** By parameter name: every input parameter the source has a value for. */
  readonly values: Readonly<Record<string, string>>;
  /** `test-plate`: one of the operator's free test plates; `sample`: the bundled sample dataset. */
  readonly source: 'test-plate' | 'sample';
}

/**
 * The key Try it fills in when an operation is chosen, so a first run answers with data: one of
 * the operator's test plates for the operation (free, and what the operator meant for trying), or
 * else the first record of the bundled sample dataset a fresh install loads (bootstrap/seed.ts),
 * the same values the OpenAPI document shows as examples. A parameter outside the stored key
 * (CheckPrice's mileage) takes the sample's or the declaration's example.
 */
export class TryItSamples {
  private readonly examples: ParameterExamples;

  constructor(
    catalogue: Catalogue,
    private readonly testPlates: Pick<TestPlates, 'list'>,
    examples?: ParameterExamples,
  ) {
    this.examples = examples ?? sampleParameterExamples(catalogue);
  }

  async of(op: OperationDeclaration): Promise<TryItSample | undefined> {
    const sample = this.examples.get(op.name);
    const plate = (await this.testPlates.list()).find((p) => p.operation === op.name);
    const keys = Catalogue.keyParameters(op);
    if (plate && keys.length > 0) {
      const parts = splitKey(plate.lookupKey);
      if (parts.length === keys.length) {
        const values: Record<string, string> = {};
        for (const parameter of Catalogue.inputParameters(op)) {
          const at = keys.indexOf(parameter);
          const value = at >= 0 ? parts[at] : (sample?.[parameter.name] ?? parameter.example);
          if (value !== undefined) values[parameter.name] = value;
        }
        return { values, source: 'test-plate' };
      }
    }
    return sample === undefined ? undefined : { values: sample, source: 'sample' };
  }
}
