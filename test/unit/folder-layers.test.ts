import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Issue 22 item 2: no import cycle between the top-level folders of src/ (a file at src/'s root,
 * app.ts or main.ts, counts as a folder of its own). A cycle makes every folder in it depend on
 * every other, so none can be read, tested or replaced alone; d94d942 had one through 14 folders.
 * Type-only imports count: they couple the folders as much as the code does.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(entry.name) ? [path] : [];
  });
}

/** `accounts` for src/accounts/..., `app.ts` for src/app.ts. */
const unitOf = (path: string): string => relative(SRC, path).split(sep)[0] ?? '';

/** Folder -> folder -> the imports that make the edge (file -> imported module), for the message. */
function folderGraph(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of sourceFiles(SRC)) {
    const from = unitOf(file);
    // preProcessFile finds every import, `export ... from`, `import type` and `import()`.
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = normalize(join(dirname(file), fileName));
      if (!target.startsWith(SRC)) continue;
      const to = unitOf(target);
      if (to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string[]>();
      graph.set(from, edges);
      edges.set(to, [...(edges.get(to) ?? []), `${relative(SRC, file)} -> ${fileName}`]);
    }
  }
  return graph;
}

/** The strongly connected components with more than one member (Tarjan). */
export function cycles(graph: ReadonlyMap<string, ReadonlyMap<string, unknown>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (stack.includes(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) component.push(w);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the folders of src/', () => {
  it('finds a cycle when there is one (the check itself can fail)', () => {
    const graph = new Map([
      ['a', new Map([['b', []]])],
      ['b', new Map([['c', []]])],
      ['c', new Map([['a', []]])],
      ['d', new Map([['a', []]])],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c']]);
  });

  it('import each other in one direction only: no import cycle between top-level folders', () => {
    const graph = folderGraph();
    const explained = cycles(graph).map((component) => {
      const edges = component.flatMap((from) => component.filter((to) => graph.get(from)?.has(to)).map((to) => `  ${from} -> ${to}: ${(graph.get(from)?.get(to) ?? []).slice(0, 2).join(', ')}`));
      return `${component.join(', ')}\n${edges.join('\n')}`;
    });
    expect(explained, `folders in an import cycle:\n${explained.join('\n')}`).toEqual([]);
  });
});
