import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GymError } from '../../src/errors.ts';
import { javaDeclaredClasses, javaMethods, stubJavaMethod } from './java.ts';

/** HumanEvo's dependency levels (paper §3.2.6): what the target's body references. */
export type DependencyLevel = 'standalone' | 'intra-class' | 'inter-class';
export const DEPENDENCY_LEVELS: DependencyLevel[] = ['standalone', 'intra-class', 'inter-class'];

export type Language = 'python' | 'java';

/** A function or method of a source file, as the builder sees it. */
export interface SourceFunction {
  qualname: string;
  name: string;
  cls: string | null;
  /** 1-based first (decorators / modifiers) and last line. */
  lines: [number, number];
  docstring: string | null;
  /** Java: the Javadoc's lines. */
  docRange?: [number, number] | null;
  signature: string;
  trivial: boolean;
  isConstructor: boolean;
  dependency: DependencyLevel;
  projectRefs: string[];
  classRefs: string[];
  /** Python: where the body after the docstring starts (0: only a docstring), and whether it shares the def's line. */
  bodyLine?: number;
  bodyCol?: number;
  oneLine?: boolean;
  indent?: number;
  /** Java: character offsets of the declaration. */
  offsets?: { headerStart: number; bodyOpen: number; bodyClose: number };
}

const HELPER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'python_functions.py');

interface PyFunction {
  qualname: string;
  name: string;
  cls: string | null;
  lines: [number, number];
  def_line: number;
  indent: number;
  body_line: number;
  body_col: number;
  one_line: boolean;
  docstring: string | null;
  signature: string;
  trivial: boolean;
  is_constructor: boolean;
  dependency: DependencyLevel;
  project_refs: string[];
  class_refs: string[];
}

/** The python3 the helper runs with (the host's; the code is parsed, never run). */
export function hostPython(): string {
  return process.env.BENCHGYM_HOST_PYTHON ?? 'python3';
}

/** Functions per file (a file that does not parse maps to an error string). */
export async function pythonFunctions(files: Record<string, string>, project: string[]): Promise<Map<string, SourceFunction[] | string>> {
  const input = JSON.stringify({ files, project });
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(hostPython(), [HELPER], { maxBuffer: 512 * 1024 * 1024, timeout: 300_000 }, (err, out, errOut) => {
      if (err)
        reject(
          new GymError(
            'ENV_UNAVAILABLE',
            `the Python function scanner failed (${hostPython()} ${HELPER}): ${String(errOut).trim().slice(-1500) || err.message}`,
          ),
        );
      else resolve(String(out));
    });
    child.stdin?.end(input);
  });
  const raw = JSON.parse(stdout) as Record<string, { functions?: PyFunction[]; error?: string }>;
  const out = new Map<string, SourceFunction[] | string>();
  for (const [file, r] of Object.entries(raw)) {
    out.set(
      file,
      r.error ??
        (r.functions ?? []).map((f) => ({
          qualname: f.qualname,
          name: f.name,
          cls: f.cls,
          lines: f.lines,
          docstring: f.docstring,
          signature: f.signature,
          trivial: f.trivial,
          isConstructor: f.is_constructor,
          dependency: f.dependency,
          projectRefs: f.project_refs,
          classRefs: f.class_refs,
          bodyLine: f.body_line,
          bodyCol: f.body_col,
          oneLine: f.one_line,
          indent: f.indent,
        })),
    );
  }
  return out;
}

/** Functions of several files of one language. */
export async function listFunctions(
  language: Language,
  files: Record<string, string>,
  project: { modules: string[]; classes: string[] },
): Promise<Map<string, SourceFunction[] | string>> {
  if (language === 'python') return pythonFunctions(files, project.modules);
  const classes = new Set(project.classes);
  const out = new Map<string, SourceFunction[] | string>();
  for (const [file, src] of Object.entries(files)) {
    try {
      out.set(file, javaMethods(src, classes));
    } catch (err) {
      out.set(file, (err as Error).message);
    }
  }
  return out;
}

/** The project's own names a body may reference: Python top-level modules, Java type names. */
export function projectNames(
  language: Language,
  paths: string[],
  read?: (p: string) => string | undefined,
): { modules: string[]; classes: string[] } {
  if (language === 'python') {
    const modules = new Set<string>();
    for (const p of paths) {
      if (!p.endsWith('.py')) continue;
      const parts = p.split('/');
      // src/ layout: the package is under src/.
      const rel = parts[0] === 'src' && parts.length > 1 ? parts.slice(1) : parts;
      modules.add(rel[0]!.replace(/\.py$/, ''));
    }
    return { modules: [...modules], classes: [] };
  }
  const classes = new Set<string>();
  for (const p of paths) {
    if (!p.endsWith('.java')) continue;
    classes.add(path.basename(p, '.java'));
    const src = read?.(p);
    if (src) for (const c of javaDeclaredClasses(src)) classes.add(c);
  }
  return { modules: [], classes: [...classes] };
}

/**
 * The source with the function's body removed; its signature and docstring stay. Python:
 * `raise NotImplementedError`; Java: `throw new UnsupportedOperationException(...)`.
 */
export function stubFunction(language: Language, src: string, fn: SourceFunction): string {
  if (language === 'java') return stubJavaMethod(src, fn);
  const lines = src.split('\n');
  const [, last] = fn.lines;
  if (fn.oneLine) {
    // def f(x): return x  ->  def f(x): raise NotImplementedError
    const l = fn.bodyLine! - 1;
    lines[l] = `${lines[l]!.slice(0, fn.bodyCol)}raise NotImplementedError`;
    lines.splice(l + 1, last - l - 1);
    return lines.join('\n');
  }
  const indent = ' '.repeat((fn.indent ?? 0) + 4);
  const bodyIndent = fn.bodyLine ? /^\s*/.exec(lines[fn.bodyLine - 1]!)![0] : indent;
  const from = fn.bodyLine ? fn.bodyLine - 1 : last;
  // Lines from the body's first statement to the end are replaced by one raise.
  lines.splice(from, fn.bodyLine ? last - from : 0, `${bodyIndent}raise NotImplementedError`);
  return lines.join('\n');
}

/** The function's source text (decorators / modifiers and docstring included). */
export function functionSource(src: string, fn: SourceFunction): string {
  return src
    .split('\n')
    .slice(fn.lines[0] - 1, fn.lines[1])
    .join('\n');
}

/** The first sentence of a docstring: HumanEvo's brief style when no brief one is supplied. */
export function briefOf(docstring: string): string {
  const para = docstring
    .trim()
    .split(/\n\s*\n/)[0]!
    .replace(/\s+/g, ' ')
    .trim();
  const m = /^(.+?[.!?])(\s|$)/.exec(para);
  return (m ? m[1]! : para).trim();
}

/** Is this path a test file for the language (not production code)? */
export function isTestPath(language: Language, p: string): boolean {
  if (language === 'java') return /(^|\/)src\/test\//.test(p) || /(^|\/)test\/.*\.java$/.test(p) || /Tests?\.java$/.test(path.basename(p));
  const base = path.basename(p);
  return /(^|\/)(tests?|testing)\//.test(p) || /^test_.*\.py$/.test(base) || /_tests?\.py$/.test(base) || base === 'conftest.py';
}

export function isSourcePath(language: Language, p: string): boolean {
  return language === 'python' ? p.endsWith('.py') : p.endsWith('.java');
}
