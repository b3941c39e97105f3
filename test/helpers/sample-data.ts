import { readFileSync } from 'node:fs';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import type { OperationDeclaration } from '../../src/catalogue/operation.js';

export interface SampleLine {
  operation: string;
  key?: Record<string, string>;
  vehicle?: Record<string, unknown>;
  mot?: Record<string, unknown>;
  ncap?: Record<string, unknown>;
}

export function sampleLines(): SampleLine[] {
  return readFileSync(SAMPLE_DATASET_PATH, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as SampleLine);
}

/** Builds the JSON interface path for a record's key, following the operation's path shape. */
export function jsonPathFor(op: OperationDeclaration, key: Readonly<Record<string, string>>): string {
  const parts: string[] = [];
  const used = new Map<string, string[]>();
  for (const segment of op.jsonPath.segments) {
    // A parameter outside the stored key (CheckPrice's mileage) takes its declared example.
    const value = key[segment.parameter] ?? op.parameters.find((p) => p.name === segment.parameter)?.example;
    if (value === undefined) {
      if (segment.optional) break;
      throw new Error(`${op.name}: key has no ${segment.parameter}`);
    }
    const pieces = used.get(segment.parameter) ?? (op.jsonPath.joinWith ? value.split(op.jsonPath.joinWith) : [value]);
    const piece = pieces.shift();
    used.set(segment.parameter, pieces);
    if (piece === undefined) break;
    parts.push(encodeURIComponent(piece));
  }
  return `/api/json.aspx/${op.name}/${parts.join('/')}`;
}
