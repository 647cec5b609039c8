import type { SandboxFactory } from '../../src/sandbox/types.ts';
import type { EnvSpec, RunnerSpec } from '../../src/tasks/schema.ts';
import type { Language } from './functions.ts';
import type { EraEnvOptions } from './era_env.ts';
import type { BuiltTaskRecord } from './record.ts';
import type { ChangeOutcome, Rejection } from './build_report.ts';

/** What `buildTasks` mines: the repository, its range, the env and runner its tests run with, and the callbacks. */
export interface BuildOptions {
  /** The repository (bare or a work tree). */
  repo: string;
  language: Language;
  /** Exclusive start of the walk (default: the first commit). */
  from?: string;
  /** Last commit walked (default HEAD); also the evolving-ignored context. */
  to?: string;
  /** Stop after this many validated tasks. */
  limit?: number;
  /** Display name of the repository (default: the folder's name). */
  repoName?: string;
  /** The environment tests run in (Python: version and requirements; Java: JDK and Maven); with eraEnv, the Python one is only the kind. */
  env: EnvSpec;
  /**
   * Python: each change gets the env of its era (the Python its files declare, its
   * dependencies and test runner as PyPI held them at its date; `era_env.ts`) instead of
   * `env`. A change whose era env cannot be had is rejected as `env-unavailable`.
   */
  eraEnv?: EraEnvOptions;
  /** How the project's tests are run (default: pytest / maven over the whole suite). */
  runner?: RunnerSpec;
  /**
   * Which tests each change is validated (and its task scored) with: `suite` (default) the
   * project's whole suite, so pass-to-pass guards everything; `change` only the test files the
   * change adds or edits (paper §3.2.4 runs the PR's tests): a Java change then costs one test
   * class, not a whole Surefire run, and its task is scored with the same selection.
   */
  testScope?: 'suite' | 'change';
  testTimeoutMs?: number;
  sandboxes: SandboxFactory;
  /** Where the validation trees are laid out (default: a temporary folder, removed at the end). */
  workDir?: string;
  /** Called with each validated task, as it is found. */
  onTask?: (record: BuiltTaskRecord) => void | Promise<void>;
  onReject?: (r: Rejection) => void;
  /** Called when a change has been walked (its tasks already given to onTask): what a resumed build skips. */
  onChange?: (outcome: ChangeOutcome) => void | Promise<void>;
  /** Changes an earlier run of the same build walked (by commit): counted from their outcome, not walked again. */
  done?: Map<string, ChangeOutcome>;
  progress?: (message: string) => void;
  signal?: AbortSignal;
}
