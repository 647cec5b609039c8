import { ownValue } from '../../src/own.ts';
import { isTestPath, listFunctions, projectNames, type Language, type SourceFunction } from './functions.ts';
import { fileAt, filesAt, type Change } from './history.ts';
import type { Rejection } from './build_report.ts';

/** A function a change added, in the file's text after the change. */
export interface Candidate {
  file: string;
  fn: SourceFunction;
  source: string;
  /** Another function of the file has the same qualified name (a Java overload). */
  overloaded?: boolean;
}

/** Functions that exist after the change and not before it, in the change's source files. */
export async function addedFunctions(
  repo: string,
  lang: Language,
  change: Change,
  sources: string[],
  reject: (r: Rejection) => void,
): Promise<Candidate[]> {
  if (!sources.length) return [];
  const after: Record<string, string> = {};
  const before: Record<string, string> = {};
  for (const f of sources) {
    after[f] = (await fileAt(repo, change.commit, f)) ?? '';
    const old = await fileAt(repo, change.parent, f);
    if (old !== undefined) before[f] = old;
  }
  const tree = await filesAt(repo, change.commit);
  const project = projectNames(lang, tree, (p) => ownValue(after, p));
  if (lang === 'java') {
    // Type names from the whole tree, read only when not already at hand.
    for (const p of tree)
      if (p.endsWith('.java') && !isTestPath(lang, p))
        project.classes.push(
          p
            .split('/')
            .pop()!
            .replace(/\.java$/, ''),
        );
  }
  const [newFns, oldFns] = await Promise.all([listFunctions(lang, after, project), listFunctions(lang, before, project)]);
  const out: Candidate[] = [];
  for (const f of sources) {
    const now = newFns.get(f);
    if (typeof now === 'string') {
      reject({ commit: change.commit, reason: 'parse-error', file: f, detail: now });
      continue;
    }
    const was = oldFns.get(f);
    const known = new Set(Array.isArray(was) ? was.map((fn) => fn.qualname) : []);
    const named = new Map<string, number>();
    for (const fn of now ?? []) named.set(fn.qualname, (named.get(fn.qualname) ?? 0) + 1);
    for (const fn of now ?? [])
      if (!known.has(fn.qualname))
        out.push({ file: f, fn, source: after[f]!, ...(named.get(fn.qualname)! > 1 ? { overloaded: true } : {}) });
  }
  return out;
}
