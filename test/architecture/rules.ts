/**
 * The rules the boundary test holds the tree to, as functions of an import graph, so that the
 * test can run them on the tree and on small planted trees (to show each one fails).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { ImportEdge } from './imports.ts';

/**
 * The core's floors, ground first: a folder of src/ imports (at run time) only from its own floor
 * or one below. The files at the top of src/ (errors.ts, lock.ts, ...) are the ground under all.
 * Above the gym: what every edge shares (protocol: the MCP server of the tool table, an episode's
 * URL, who may reach a server), the agents that connect through it, the runner that runs them,
 * what reads a run (replay, ATIF export), the viewer of runs, the server that serves it all.
 */
export const FLOORS: readonly (readonly string[])[] = [
  ['tasks'],
  ['repo'],
  ['env'],
  ['sandbox'],
  ['scoring'],
  ['tools'],
  ['episode'],
  ['protocol'],
  ['agent'],
  ['runner'],
  ['replay', 'atif'],
  ['viewer'],
  ['server'],
  ['cli'],
];

/** The floor of a file of src/ (0 for the files at its top), or undefined for a folder no floor names. */
export function floorOf(file: string, floors: readonly (readonly string[])[] = FLOORS): number | undefined {
  const parts = file.split(path.sep);
  if (parts[0] !== 'src') return undefined;
  if (parts.length === 2) return 0;
  const i = floors.findIndex((f) => f.includes(parts[1]!));
  return i < 0 ? undefined : i + 1;
}

/** Run-time imports of src/ from a lower floor to a higher one, and files in a folder no floor names. */
export function upwardImports(edges: ImportEdge[], floors: readonly (readonly string[])[] = FLOORS): string[] {
  const out: string[] = [];
  for (const e of edges) {
    if (e.typeOnly || !e.from.startsWith(`src${path.sep}`) || !e.to.startsWith(`src${path.sep}`)) continue;
    const [a, b] = [floorOf(e.from, floors), floorOf(e.to, floors)];
    if (a === undefined || b === undefined) out.push(`${a === undefined ? e.from : e.to}: in a folder of src/ that no floor names`);
    else if (b > a) out.push(`${e.from}:${e.line} imports ${e.to} (floor ${a} imports floor ${b})`);
  }
  return [...new Set(out)];
}

/** The folders others reach only through their index.ts: each sandbox backend and each suite. */
export function facedFolders(root: string): string[] {
  const dirs = (d: string) =>
    existsSync(path.join(root, d))
      ? readdirSync(path.join(root, d), { withFileTypes: true })
          .filter((x) => x.isDirectory())
          .map((x) => path.join(d, x.name))
      : [];
  const backends = ['local', 'docker', 'kubernetes']
    .map((b) => path.join('src', 'sandbox', b))
    .filter((d) => existsSync(path.join(root, d)));
  return [...backends, ...dirs('envs')];
}

/** Imports from outside a backend's or a suite's folder of any of its files but its index.ts. */
export function importsAroundFaces(edges: ImportEdge[], faced: string[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const folder = faced.find((d) => e.to.startsWith(d + path.sep));
    if (!folder || e.from.startsWith(folder + path.sep) || e.to === path.join(folder, 'index.ts')) continue;
    out.push(`${e.from}:${e.line} imports ${e.to} around ${path.join(folder, 'index.ts')}`);
  }
  return out;
}

/** Imports from one suite (envs/<name>/) into another. */
export function suitesImportingSuites(edges: ImportEdge[]): string[] {
  const suite = (f: string) => {
    const parts = f.split(path.sep);
    return parts[0] === 'envs' && parts.length > 2 ? parts[1] : undefined;
  };
  return edges
    .filter((e) => suite(e.from) && suite(e.to) && suite(e.from) !== suite(e.to))
    .map((e) => `${e.from}:${e.line} imports ${e.to}: a suite stands alone`);
}
