import type { WireResponse } from './http-fixture.js';

/**
 * Readable mismatch reports for golden wire files: a line diff of the bodies split where a human
 * would split them (one-line SOAP envelopes at every `><`, indented documents at their line
 * breaks) plus the first differing byte, so a difference the diff cannot show (a CR, a trailing
 * space) is still pinned down.
 */

const CONTEXT = 3;
const MAX_DIFF_LINES = 150;
/** Above this many token pairs the LCS table is not worth it; the byte report still says where. */
const MAX_LCS_CELLS = 25_000_000;

/**
 * Splits a body into diff units. Each unit keeps its exact bytes (its line ending included), so
 * two units compare equal only when the bytes do.
 */
export function diffUnits(text: string): string[] {
  return text.split(/(?<=\n)/).flatMap((line) => line.split(/(?<=>)(?=<)/));
}

/** Shows a unit on one line: the usual CRLF ending hidden, any other control character escaped. */
function visible(unit: string): string {
  return unit.replace(/\r\n$/, '').replace(/[\r\n\t]/g, (c) => (c === '\r' ? '\\r' : c === '\n' ? '\\n' : '\\t'));
}

/**
 * How each unit is shown, by index. One-line documents (SOAP envelopes) are indented by element
 * depth for reading; documents that already have line breaks keep their own indentation.
 */
function displayLines(units: readonly string[]): string[] {
  if (units.some((u, i) => u.endsWith('\n') && i < units.length - 1)) return units.map(visible);
  let depth = 0;
  return units.map((unit) => {
    const isClose = unit.startsWith('</');
    const isOpen = unit.startsWith('<') && !isClose && !unit.startsWith('<?') && !unit.endsWith('/>') && !unit.includes('</');
    if (isClose) depth = Math.max(0, depth - 1);
    const shown = `${'  '.repeat(depth)}${visible(unit)}`;
    if (isOpen) depth += 1;
    return shown;
  });
}

/** One step of the edit script: `a`/`b` index the expected/actual units (the unit shown is `a` for ' ' and '-', `b` for '+'). */
type Op = { readonly kind: ' ' | '-' | '+'; readonly a: number; readonly b: number };

/** Longest-common-subsequence edit script between two unit lists. */
function editScript(a: readonly string[], b: readonly string[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  if ((n + 1) * (m + 1) > MAX_LCS_CELLS) return undefined;
  const lcs = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number): number => lcs[i * (m + 1) + j] ?? 0;
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lcs[i * (m + 1) + j] = a[i] === b[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: ' ', a: i, b: j });
      i += 1;
      j += 1;
    } else if (i < n && (j === m || at(i + 1, j) >= at(i, j + 1))) {
      // Deletions before insertions, as in a unified diff: expected first, then actual.
      ops.push({ kind: '-', a: i, b: j });
      i += 1;
    } else {
      ops.push({ kind: '+', a: i, b: j });
      j += 1;
    }
  }
  return ops;
}

/** Unified-style hunks (`-` expected, `+` actual) with a few units of context. */
function renderHunks(ops: readonly Op[], shownExpected: readonly string[], shownActual: readonly string[]): string[] {
  const changed = ops.map((op, k) => (op.kind === ' ' ? -1 : k)).filter((k) => k >= 0);
  const out: string[] = [];
  let k = 0;
  while (k < changed.length) {
    const first = changed[k] ?? 0;
    let last = first;
    while (k + 1 < changed.length && (changed[k + 1] ?? 0) - last <= 2 * CONTEXT + 1) {
      k += 1;
      last = changed[k] ?? last;
    }
    k += 1;
    const from = Math.max(0, first - CONTEXT);
    const to = Math.min(ops.length - 1, last + CONTEXT);
    const start = ops[from];
    out.push(`@@ expected unit ${(start?.a ?? 0) + 1}, actual unit ${(start?.b ?? 0) + 1} @@`);
    for (let x = from; x <= to; x += 1) {
      const op = ops[x];
      if (!op) continue;
      out.push(`${op.kind} ${(op.kind === '+' ? shownActual[op.b] : shownExpected[op.a]) ?? ''}`);
    }
  }
  return out;
}

/** Where two buffers first differ, with escaped context from each side. */
function firstDifference(expected: Buffer, actual: Buffer): string {
  const limit = Math.min(expected.length, actual.length);
  let offset = 0;
  while (offset < limit && expected[offset] === actual[offset]) offset += 1;
  const before = expected.subarray(0, offset).toString('utf8');
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  const around = (buf: Buffer): string => JSON.stringify(buf.subarray(Math.max(0, offset - 40), offset + 40).toString('utf8'));
  return [
    `first difference at byte ${offset} (expected line ${line}, column ${column}); expected ${expected.length} bytes, actual ${actual.length} bytes`,
    `  expected ...${around(expected)}...`,
    `  actual   ...${around(actual)}...`,
  ].join('\n');
}

/** A readable report of how two bodies differ, or undefined when their bytes are equal. */
export function describeBodyDifference(expected: Buffer, actual: Buffer): string | undefined {
  if (expected.equals(actual)) return undefined;
  const a = diffUnits(expected.toString('utf8'));
  const b = diffUnits(actual.toString('utf8'));
  const lines = [firstDifference(expected, actual)];
  const ops = editScript(a, b);
  if (ops === undefined) {
    lines.push('(bodies too large for a line diff)');
  } else {
    const hunks = renderHunks(ops, displayLines(a), displayLines(b));
    if (hunks.length === 0) lines.push('(the diff units are equal: the difference is in how the text decodes)');
    lines.push('--- expected (golden file)', '+++ actual', ...hunks.slice(0, MAX_DIFF_LINES));
    if (hunks.length > MAX_DIFF_LINES) lines.push(`... ${hunks.length - MAX_DIFF_LINES} more diff lines`);
  }
  return lines.join('\n');
}

/**
 * Compares a response with the golden expectation: status line, each header the golden file
 * lists (by name, case-insensitively), and the body bytes. Returns the report, or undefined.
 */
export function describeResponseDifference(expected: WireResponse, actual: WireResponse): string | undefined {
  const problems: string[] = [];
  if (expected.status !== actual.status || expected.reason !== actual.reason) {
    problems.push(`status: expected ${expected.status} ${expected.reason}, got ${actual.status} ${actual.reason}`);
  }
  for (const [name, want] of expected.headers) {
    const got = actual.headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
    if (got !== want) problems.push(`header ${name}: expected ${JSON.stringify(want)}, got ${got === undefined ? '(absent)' : JSON.stringify(got)}`);
  }
  const body = describeBodyDifference(expected.body, actual.body);
  if (body !== undefined) problems.push(`body:\n${body}`);
  return problems.length === 0 ? undefined : problems.join('\n');
}
