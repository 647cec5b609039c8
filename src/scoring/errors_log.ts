import type { TestRun } from './runners.ts';

export interface CompilerError {
  file: string;
  line: number;
  column?: number;
  message: string;
}

export interface ParsedFailures {
  failures: { test: string; status: string; message?: string; details?: string }[];
  compilerErrors: CompilerError[];
  /** Python tracebacks found in the log outside any test report (scripts, import errors). */
  tracebacks: string[];
}

/** javac through Maven: `[ERROR] /path/Foo.java:[12,5] cannot find symbol`. */
const MAVEN_COMPILER = /^\[ERROR\] (\S+\.java):\[(\d+),(\d+)\] (.*)$/gm;
/** javac / Gradle: `Foo.java:12: error: cannot find symbol`. */
const JAVAC = /^(\S+\.java):(\d+): error: (.*)$/gm;

/** Pulls what went wrong out of a test run: failing tests, compiler errors, tracebacks. */
export function parseFailures(run: TestRun, workdir?: string): ParsedFailures {
  const strip = (file: string) => (workdir && file.startsWith(workdir + '/') ? file.slice(workdir.length + 1) : file);
  const failures = run.tests
    .filter((t) => t.status === 'failed' || t.status === 'error')
    .map((t) => ({ test: t.name, status: t.status, message: t.message, details: t.details }));
  const compilerErrors: CompilerError[] = [];
  const seen = new Set<string>();
  for (const m of run.log.matchAll(MAVEN_COMPILER)) {
    const key = m[0];
    if (seen.has(key)) continue;
    seen.add(key);
    compilerErrors.push({ file: strip(m[1]!), line: Number(m[2]), column: Number(m[3]), message: m[4]!.trim() });
  }
  for (const m of run.log.matchAll(JAVAC)) compilerErrors.push({ file: strip(m[1]!), line: Number(m[2]), message: m[3]!.trim() });
  const tracebacks: string[] = [];
  if (!failures.length) {
    const lines = run.log.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith('Traceback (most recent call last):')) continue;
      let j = i + 1;
      while (j < lines.length && (lines[j]!.startsWith(' ') || lines[j]!.startsWith('\t'))) j++;
      tracebacks.push(lines.slice(i, Math.min(j + 1, lines.length)).join('\n'));
      i = j;
    }
  }
  return { failures, compilerErrors, tracebacks };
}
