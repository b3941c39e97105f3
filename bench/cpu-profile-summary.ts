/**
 * `npx tsx bench/cpu-profile-summary.ts FILE.cpuprofile [--top N] [--skip-ms MS] [--from FUNCTION]`: a V8 CPU profile
 * (`node --cpu-prof`, e.g. BENCH_CPU_PROF=dir npm run bench:json) as flame-graph-style top lists,
 * the text docs/benchmarks.md keeps:
 * - by function: self time (samples where it was the leaf) and total time (samples where it was
 *   anywhere on the stack, counted once per sample however often it recursed);
 * - by module: the same by source file, with node_modules packages folded into their package name
 *   and Node's internals into `node:internal`.
 * Percentages are of the busy samples (idle and program are shown apart; GC counts as busy), from
 * the first sample whose stack holds Node's HTTP parser callback (`parserOnIncoming`: the first
 * request, so start-up is left out), plus `--skip-ms` more. `--from` names another function to start
 * at (a profile without requests, such as an import's: `--from readDmrFile`; `--from ''` starts at
 * the first sample).
 *
 * The profiler samples the thread by wall clock: time blocked in a synchronous call (SQLite's
 * COMMIT syncing the disk, a socket write) counts against the function that made it.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** The module a frame belongs to: a package name, `node:internal`, or a path relative to the project. */
function moduleOf(url: string): string {
  if (url === '') return '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') === true ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? url);
  }
  const src = url.search(/\/(src|bench|test)\//);
  return src >= 0 ? url.slice(src + 1) : url.replace(/^file:\/\//, '');
}

function functionOf(frame: CallFrame): string {
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  if (SPECIAL.has(name)) return name;
  return `${name} ${moduleOf(frame.url)}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`;
}

function parseArgs(argv: readonly string[]): { file: string; top: number; skipMs: number; from: string } {
  let file: string | undefined;
  let top = 25;
  let skipMs = 0;
  let from = 'parserOnIncoming';
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--top') top = Number(argv[(i += 1)]);
    else if (arg === '--skip-ms') skipMs = Number(argv[(i += 1)]);
    else if (arg === '--from') from = argv[(i += 1)] ?? '';
    else file = arg;
  }
  if (file === undefined || !Number.isFinite(top) || !Number.isFinite(skipMs)) {
    throw new Error('usage: tsx bench/cpu-profile-summary.ts FILE.cpuprofile [--top N] [--skip-ms MS] [--from FUNCTION]');
  }
  return { file, top, skipMs, from };
}

function main(): void {
  const { file, top, skipMs, from } = parseArgs(process.argv.slice(2));
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n] as const));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const selfFn = new Map<string, number>();
  const totalFn = new Map<string, number>();
  const selfMod = new Map<string, number>();
  const totalMod = new Map<string, number>();
  const special = new Map<string, number>();
  let busy = 0;
  let elapsed = 0;
  let startedAt: number | undefined;
  const stackHas = (id: number, name: string): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if (byId.get(at)?.callFrame.functionName === name) return true;
    return false;
  };
  const add = (map: Map<string, number>, key: string, us: number): void => {
    map.set(key, (map.get(key) ?? 0) + us);
  };
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    elapsed += profile.timeDeltas[i] ?? 0;
    if (startedAt === undefined && (from === '' || stackHas(id, from))) startedAt = elapsed;
    if (startedAt === undefined || (elapsed - startedAt) / 1000 < skipMs) return;
    const leaf = byId.get(id);
    if (!leaf) return;
    const leafName = leaf.callFrame.functionName;
    if (SPECIAL.has(leafName) && leafName !== '(garbage collector)') {
      add(special, leafName, us);
      return;
    }
    busy += us;
    add(selfFn, functionOf(leaf.callFrame), us);
    add(selfMod, leafName === '(garbage collector)' ? '(garbage collector)' : moduleOf(leaf.callFrame.url), us);
    const fns = new Set<string>();
    const mods = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (!node || node.callFrame.functionName === '(root)') continue;
      fns.add(functionOf(node.callFrame));
      mods.add(node.callFrame.functionName === '(garbage collector)' ? '(garbage collector)' : moduleOf(node.callFrame.url));
    }
    for (const f of fns) add(totalFn, f, us);
    for (const m of mods) add(totalMod, m, us);
  });

  const pct = (us: number): string => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const list = (title: string, self: Map<string, number>, total: Map<string, number>, by: 'self' | 'total'): void => {
    const keys = [...(by === 'self' ? self : total).entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    console.log(`\n${title} (top ${top} by ${by} time; % of busy samples)`);
    console.log('   self   total  name');
    for (const [key] of keys) console.log(`${pct(self.get(key) ?? 0)}  ${pct(total.get(key) ?? 0)}  ${key}`);
  };
  console.log(`${file}: busy ${(busy / 1e6).toFixed(2)} s from the first request + ${skipMs} ms; ` + [...special.entries()].map(([k, v]) => `${k} ${(v / 1e6).toFixed(2)} s`).join(', '));
  list('functions', selfFn, totalFn, 'self');
  list('functions', selfFn, totalFn, 'total');
  list('modules', selfMod, totalMod, 'self');
  list('modules', selfMod, totalMod, 'total');
}

main();
