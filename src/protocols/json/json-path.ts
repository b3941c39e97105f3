import type { OperationDeclaration } from '../../catalogue/operation.js';
import { LookupError } from '../../lookup/lookup-error.js';
import type { RawArguments } from '../../lookup/lookup-query.js';

/** Splits `/api/json.aspx/{Method}/{...}` (raw, still encoded) into the method and its segments. */
export function splitJsonPath(rawUrl: string, prefix: string): { method: string; segments: string[] } {
  const path = rawUrl.split('?', 1)[0] ?? '';
  const rest = path.slice(prefix.length);
  const [method = '', ...segments] = rest.split('/');
  return { method: decodeSegment(method), segments };
}

/** `+` and `%20` both mean a space in path values (interface spec "JSON interface"). */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment.replaceAll('+', ' '));
  } catch {
    throw new LookupError('INVALID_INPUT', 'The request path has malformed percent-encoding');
  }
}

/** The documented path shape, e.g. `/CheckUSA/{RegistrationNumber}/{State}`. */
export function pathShape(op: OperationDeclaration): string {
  return `/${op.name}${op.jsonPath.segments.map((s) => `/{${s.label}}`).join('')}`;
}

/** Maps path segments to parameter values following the operation's declared path shape. */
export function bindJsonSegments(op: OperationDeclaration, rawSegments: readonly string[]): RawArguments {
  const shape = op.jsonPath.segments;
  const required = shape.filter((s) => !s.optional).length;
  if (rawSegments.length < required || rawSegments.length > shape.length) {
    const expected = required === shape.length ? `${shape.length}` : `${required} to ${shape.length}`;
    throw new LookupError(
      'INVALID_INPUT',
      `${op.name} expects ${pathShape(op)}: ${expected} path value${shape.length === 1 ? '' : 's'} after the method name, got ${rawSegments.length}`,
    );
  }
  const parts = new Map<string, string[]>();
  rawSegments.forEach((raw, i) => {
    const segment = shape[i];
    if (!segment) return;
    const list = parts.get(segment.parameter) ?? [];
    list.push(decodeSegment(raw));
    parts.set(segment.parameter, list);
  });
  const args: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [parameter, values] of parts) args[parameter] = values.join(op.jsonPath.joinWith ?? '');
  return args;
}
