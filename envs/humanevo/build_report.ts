import type { Language } from './functions.ts';

/** Why a change or a candidate function did not become a task. */
export type RejectReason =
  | 'no-test-change'
  | 'no-added-function'
  | 'parse-error'
  | 'constructor'
  | 'trivial-body'
  | 'no-docstring'
  /** Java: the method shares its name with another of its class (an overload): the task's target would not be one method. */
  | 'overloaded'
  | 'no-test-results'
  | 'breaks-passing-tests'
  | 'change-tests-fail'
  | 'no-fail-to-pass'
  /** The env of the change's era cannot be had on this machine (no fitting Python, an unresolvable or unbuildable requirement). */
  | 'env-unavailable'
  /** The change's tree (or its parent's) cannot be read whole from the local copy: a blob or a tree it lacks. */
  | 'unexportable'
  /**
   * Its tests could not be run (the sandbox or the runner failed, not a test): not journaled, so a
   * resumed build (`--resume`) tries the change again.
   */
  | 'run-failed';

export const CHANGE_REASONS: RejectReason[] = ['no-test-change', 'no-added-function', 'parse-error'];

export interface Rejection {
  commit: string;
  reason: RejectReason;
  function?: string;
  file?: string;
  detail?: string;
}

/** What walking one change gave: the journal line of a resumable build. */
export interface ChangeOutcome {
  commit: string;
  rejections: Rejection[];
  /** Instance ids of the tasks it gave. */
  tasks: string[];
  candidates: number;
  testRuns: number;
  /** Time spent walking it (its test runs, env builds included); absent in journals of older builds. */
  durationMs?: number;
}

export interface BuildReport {
  repo: string;
  language: Language;
  latestCommit: string;
  /** Changes in the range, and how many were walked before --limit stopped the walk. */
  changes: number;
  walked: number;
  /** Of the walked changes, those taken from an earlier run's journal (resume). */
  resumed: number;
  candidates: number;
  validated: number;
  rejected: Partial<Record<RejectReason, number>>;
  rejections: Rejection[];
  testRuns: number;
  /** The distinct envs the changes were tested in: Python (or JDK), what chose it, and the tasks each gave. */
  envs: EnvUse[];
  /** This run's wall time. */
  durationMs: number;
  /** Time spent walking the changes, over this run and the resumed runs whose journals say (the build's cost). */
  walkMs: number;
  stoppedAtLimit: boolean;
}

export interface EnvUse {
  key: string;
  python?: string;
  from?: string;
  cutoff?: string | null;
  /** Changes tested in it, and the tasks they gave. */
  changes: number;
  tasks: number;
}
