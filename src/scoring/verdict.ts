import type { GymErrorCode } from '../errors.ts';
import type { TestCaseResult } from './junit.ts';
import type { TestRun } from './runners.ts';

export interface Outcome {
  passed: string[];
  failed: string[];
}

export interface Verdict {
  taskId: string;
  suite: string;
  reward: 0 | 1;
  /**
   * 'error' is an infrastructure failure, not a wrong answer (reports count it as a sample that did
   * not pass); one after the candidate's code ran is scored again first (after_candidate.ts).
   */
  status: 'passed' | 'failed' | 'error';
  tests: TestCaseResult[];
  failToPass?: Outcome;
  passToPass?: Outcome;
  /** Substitutions, neutralised tampering, timeouts: facts a reader of results needs. */
  notes: string[];
  error?: { code: GymErrorCode; message: string };
  exitCode?: number | null;
  timedOut?: boolean;
  /** Where the full scoring log is kept. */
  logRef?: string;
  durationMs: number;
}

function outcome(ids: string[], byName: Map<string, TestCaseResult>): Outcome {
  const passed: string[] = [];
  const failed: string[] = [];
  for (const id of ids) (byName.get(id)?.status === 'passed' ? passed : failed).push(id);
  return { passed, failed };
}

/**
 * The decision rule. With FAIL_TO_PASS / PASS_TO_PASS lists (SWE-bench style) the task is
 * resolved iff every listed test passes; a listed test that did not run counts as failed.
 * Without lists, every test that ran must pass, at least one must have run, and the runner
 * must exit 0; with `passWhen: 'exit-code'` the exit code alone decides.
 */
export function decide(
  run: TestRun,
  lists: { failToPass: string[]; passToPass: string[]; passWhen?: 'tests' | 'exit-code' },
  notes: string[],
): Pick<Verdict, 'reward' | 'status' | 'tests' | 'failToPass' | 'passToPass' | 'notes' | 'exitCode' | 'timedOut'> {
  const tests = run.tests;
  const byName = new Map(tests.map((t) => [t.name, t]));
  const base = { tests, exitCode: run.exec.exitCode, timedOut: run.exec.timedOut, notes: [...notes] };
  if (run.exec.timedOut) base.notes.push('the test run hit its time limit: counted against the solution');
  if (lists.failToPass.length || lists.passToPass.length) {
    const f2p = outcome(lists.failToPass, byName);
    const p2p = outcome(lists.passToPass, byName);
    const resolved = f2p.failed.length === 0 && p2p.failed.length === 0;
    return { ...base, reward: resolved ? 1 : 0, status: resolved ? 'passed' : 'failed', failToPass: f2p, passToPass: p2p };
  }
  const allPassed =
    tests.length > 0 && tests.every((t) => t.status === 'passed' || t.status === 'skipped') && tests.some((t) => t.status === 'passed');
  const ok = (lists.passWhen === 'exit-code' || allPassed) && run.exec.exitCode === 0 && !run.exec.timedOut;
  if (ok && !allPassed)
    base.notes.push(
      `exit code 0 with ${tests.length ? 'no test passed (all skipped)' : 'no test reported'}` +
        `: passes by the exit code, as the benchmark's harness decides`,
    );
  if (!tests.length && !run.exec.timedOut)
    base.notes.push('no test results were reported (the code under test may break collection or compilation)');
  return { ...base, reward: ok ? 1 : 0, status: ok ? 'passed' : 'failed' };
}
