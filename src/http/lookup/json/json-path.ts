import { Catalogue } from '../../../catalogue/catalogue.js';
import type { OperationDeclaration } from '../../../catalogue/operation.js';
import { LookupError } from '../../../lookup/lookup-error.js';
import type { RawArguments } from '../../../lookup/lookup-query.js';

/** Splits `/api/json.aspx/{Method}/{...}` (raw, still encoded) into the method and its segments. */
export function splitJsonPath(rawUrl: string, prefix: string): { method: string; segments: string[] } {
  const query = rawUrl.indexOf('?');
  const path = query < 0 ? rawUrl : rawUrl.slice(0, query);
  const segments = path.slice(prefix.length).split('/');
  const method = segments.shift() ?? '';
  return { method: decodeSegment(method), segments };
}

/** `+` and `%20` both mean a space in path values (interface spec "JSON interface"). */
export function decodeSegment(segment: string): string {
  if (!segment.includes('%') && !segment.includes('+')) return segment;
  try {
    return decodeURIComponent(segment.replaceAll('+', ' '));
  } catch {
    throw new LookupError('INVALID_INPUT', 'The request path has malformed percent-encoding');
  }
}

/**
 * Maps path segments to parameter values following the operation's declared path shape. Segments
 * of one parameter (a KBA number's two halves) are joined with the shape's `joinWith`, in order.
 */
export function bindJsonSegments(op: OperationDeclaration, rawSegments: readonly string[]): RawArguments {
  const shape = op.jsonPath.segments;
  const required = Catalogue.requiredPathSegments(op);
  if (rawSegments.length < required || rawSegments.length > shape.length) {
    const expected = required === shape.length ? `${shape.length}` : `${required} to ${shape.length}`;
    throw new LookupError(
      'INVALID_INPUT',
      `${op.name} expects ${Catalogue.jsonPathShape(op)}: ${expected} path value${shape.length === 1 ? '' : 's'} after the method name, got ${rawSegments.length}`,
    );
  }
  const joinWith = op.jsonPath.joinWith ?? '';
  const args: Record<string, string> = Object.create(null) as Record<string, string>;
  for (let i = 0; i < rawSegments.length; i++) {
    const segment = shape[i];
    if (!segment) continue;
    const value = decodeSegment(rawSegments[i] ?? '');
    const before = args[segment.parameter];
    args[segment.parameter] = before === undefined ? value : `${before}${joinWith}${value}`;
  }
  return args;
}
