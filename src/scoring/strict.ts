import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { TAMPER } from './mode.ts';
import type { TestRun } from './runners.ts';

/** The strict pytest launcher (`python -c <it> CONTROL <pytest args>`): see pytest_strict.py. */
export const STRICT_PYTEST_LAUNCHER = readFileSync(new URL('./pytest_strict.py', import.meta.url), 'utf8');

/** What the strict launcher writes after pytest.main returns. */
export const StrictRecord = z.object({
  nonce: z.string(),
  exit: z.number().int(),
  junit: z.string().nullable(),
  tamper: z.array(z.string()),
  notes: z.array(z.string()).default([]),
  results: z.array(z.tuple([z.string(), z.string(), z.string()])),
  collected: z.array(z.string()).nullable(),
});
export type StrictRecord = z.infer<typeof StrictRecord>;

/**
 * A strict run's evidence: the launcher's record (null when none was written), the nonce it had to repeat, the JUnit report's hash as read.
 */
export interface StrictEvidence {
  record: StrictRecord | null;
  nonce: string;
  junitSha256: string | null;
}

/** Python bytecode and extension modules: files a source patch never needs, which would run instead of the source the diff shows. */
const COMPILED = /(^|\/)__pycache__\/|\.py[co]$|\.(so|pyd)$/;

/**
 * The patch without its compiled Python files (`diff --git` sections whose path is bytecode or
 * an extension module), and the paths removed.
 */
export function stripCompiled(patch: string): { patch: string; removed: string[] } {
  const sections = patch.split(/^(?=diff --git )/m);
  const removed: string[] = [];
  const kept = sections.filter((s) => {
    const head = /^diff --git (?:"?a\/)(.+?)"? (?:"?b\/)(.+?)"?$/m.exec(s.split('\n', 1)[0]!);
    if (!head || !s.startsWith('diff --git ')) return true;
    const hit = [head[1]!, head[2]!].find((p) => COMPILED.test(p));
    if (hit) removed.push(hit);
    return !hit;
  });
  return { patch: kept.join(''), removed: [...new Set(removed)] };
}

/** Entry-point files the patch adds or changes that name a pytest plugin (`[pytest11]`): plugin autoloading would run them. */
export function pytestEntryPoints(patch: string): string[] {
  const found: string[] = [];
  for (const s of patch.split(/^(?=diff --git )/m)) {
    const head = /^diff --git (?:"?a\/)(.+?)"? (?:"?b\/)(.+?)"?$/m.exec(s.split('\n', 1)[0]!);
    if (head && /\.(dist|egg)-info\/entry_points\.txt$/.test(head[2]!) && /^\+\s*\[pytest11\]/m.test(s)) found.push(head[2]!);
  }
  return found;
}

/** Removes every bytecode file of the workspace before the hidden tests run (none may stand in for a module's source). */
export const REMOVE_BYTECODE =
  'find . -name .git -prune -o -name __pycache__ -type d -prune -exec rm -rf {} + -o ' +
  "\\( -name '*.pyc' -o -name '*.pyo' \\) -type f -exec rm -f {} + 2>/dev/null; true";

/** pytest's outcome of a test from its reports: failed if a phase failed, passed if its call passed, else skipped. */
function outcomes(results: StrictRecord['results']): Map<string, 'passed' | 'failed' | 'skipped'> {
  const out = new Map<string, 'passed' | 'failed' | 'skipped'>();
  for (const [id, when, outcome] of results) {
    const prev = out.get(id);
    if (outcome === 'failed') out.set(id, 'failed');
    else if (prev !== 'failed' && when === 'call' && outcome === 'passed') out.set(id, 'passed');
    else if (!prev) out.set(id, 'skipped');
  }
  return out;
}

/**
 * Why a pytest run that passed cannot be believed, from the strict launcher's record: no
 * record with the nonce (the process ended before pytest's session did), another exit code
 * than pytest's, a JUnit report changed after pytest wrote it, more passes in the report than
 * pytest recorded, replaced internals or workspace plugins, expected tests that never ran.
 * Empty: nothing suspicious.
 */
export function pytestFindings(run: TestRun, evidence: StrictEvidence, expected?: string[]): string[] {
  const r = evidence.record;
  if (!r || r.nonce !== evidence.nonce)
    return ["the test process ended before pytest's session did (os._exit, a crash or a signal): no record of its end"];
  const found = [...r.tamper];
  if (run.exec.exitCode !== r.exit) found.push(`the process exited with ${run.exec.exitCode} where pytest's session ended with ${r.exit}`);
  if (r.junit !== evidence.junitSha256) found.push('the JUnit report was changed after pytest wrote it');
  const truth = outcomes(r.results);
  const passed = [...truth.values()].filter((s) => s === 'passed').length;
  const reportedPassed = run.tests.filter((t) => t.status === 'passed');
  if (reportedPassed.length > passed) found.push(`the report shows ${reportedPassed.length} passed tests where pytest recorded ${passed}`);
  const contradicted = reportedPassed.filter((t) => truth.has(t.name) && truth.get(t.name) !== 'passed').map((t) => t.name);
  if (contradicted.length)
    found.push(`reported passed but ${truth.get(contradicted[0]!)} in pytest's own record: ${contradicted.slice(0, 5).join(', ')}`);
  if (expected?.length) {
    const missing = expected.filter((id) => !truth.has(id));
    if (missing.length)
      found.push(
        `${missing.length} of the ${expected.length} hidden tests collected ` +
          `in the start state did not run: ${missing.slice(0, 5).join(', ')}`,
      );
  }
  return found;
}

/**
 * The harness lines (`TAMPER_SUSPECTED: ...`) an exit-code harness prints when it saw a trick (a suite's own scorer script in strict mode).
 */
export function scriptFindings(run: TestRun): string[] {
  const prefix = `${TAMPER}: `;
  return [
    ...new Set(
      run.exec.stderr
        .split('\n')
        .filter((l) => l.startsWith(prefix))
        .map((l) => l.slice(prefix.length).trim()),
    ),
  ];
}
