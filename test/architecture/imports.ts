/**
 * The import graph of the project's TypeScript files, read from their text: every static
 * `import`/`export ... from` and every `import('...')` of a relative path, resolved to files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface ImportEdge {
  from: string;
  to: string;
  /** `import type` / `export type`: erased at run time. */
  typeOnly: boolean;
  line: number;
}

/** Every .ts file below `dir` (relative to `root`), sorted. */
export function tsFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(path.join(root, d)).sort()) {
      const rel = path.join(d, name);
      if (statSync(path.join(root, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.ts')) out.push(rel);
    }
  };
  walk(dir);
  return out;
}

const STATIC = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The relative imports of one file, resolved against the project root. */
export function importsOf(root: string, file: string): ImportEdge[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const edges: ImportEdge[] = [];
  const add = (spec: string, typeOnly: boolean, index: number) => {
    if (!spec.startsWith('.')) return;
    edges.push({ from: file, to: path.normalize(path.join(path.dirname(file), spec)), typeOnly, line: lineAt(index) });
  };
  for (const m of text.matchAll(STATIC)) {
    // `import { type A, type B } from` is erased too.
    const clause = m[0];
    const allTypes =
      Boolean(m[2]) ||
      (/\{([^}]*)\}/.test(clause) &&
        !/^\s*(import|export)\s+\w+\s*,/.test(clause) &&
        /\{([^}]*)\}/
          .exec(clause)![1]!
          .split(',')
          .every((n) => !n.trim() || n.trim().startsWith('type ')));
    add(m[3]!, allTypes, m.index);
  }
  for (const m of text.matchAll(DYNAMIC)) add(m[1]!, false, m.index);
  return edges;
}

/** The cycles of a graph (one per strongly connected component of more than one file, or a self-import). */
export function cycles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  // Tarjan's strongly connected components.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}
