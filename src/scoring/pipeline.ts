import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { GymError, INFRA_CODES, toGymError, type GymErrorCode } from '../errors.ts';
import { sandboxEnv, type PreparedEnv } from '../env/types.ts';
import { patchMethodLabel } from '../sandbox/patch_apply.ts';
import { DEFAULT_PATCH_CHAIN, type PatchMethod, type Sandbox, type SandboxFactory } from '../sandbox/types.ts';
import type { Task } from '../tasks/schema.ts';
import { seedOf } from '../tasks/seed.ts';
import { rescored, rescoredNote, rescoreFailedNote, secondFailure, type HarnessFailure } from './after_candidate.ts';
import { candidateNote } from './candidate_files.ts';
import type { ScoringMode } from './mode.ts';
import type { TestRun } from './runners.ts';
import type { Verdict } from './verdict.ts';

export interface ScoreDeps {
  sandboxes: SandboxFactory;
  /** Where scoring logs are written (`Verdict.logRef`). */
  logDir?: string;
}

export interface ScoreOptions {
  signal?: AbortSignal;
  progress?: (message: string) => void;
  /** strict (default): known tricks give reward 0 with a TAMPER_SUSPECTED note; faithful: the benchmark's own harness. */
  scoring?: ScoringMode;
}

/** A verdict before the pipeline completes it (task, suite, duration, log). */
export type VerdictBody = Omit<Verdict, 'taskId' | 'suite' | 'durationMs' | 'logRef'>;

/** One scoring in progress: what every step reads, and the notes and log they add to. */
export interface ScoringRun {
  readonly task: Task;
  readonly env: PreparedEnv;
  /** The fresh scoring sandbox, laid out from the task's untouched start state. */
  readonly sandbox: Sandbox;
  readonly opts: ScoreOptions;
  /** The candidate's patch; a step before the patch may rewrite it (strict mode strips compiled files). */
  patch: string;
  /** The verdict's notes so far. */
  readonly notes: string[];
  /** The scoring log (`Verdict.logRef`). */
  readonly log: string[];
}

/** How a suite's harness applies the candidate's patch. */
export interface PatchStep {
  /** The methods tried in order (default: the sandbox's DEFAULT_PATCH_CHAIN). */
  chain?: readonly PatchMethod[];
  /** Reset the work tree between tries, as SWE-bench's harness does. */
  resetBetweenTries?: boolean;
  /** The verdict's note when no method applies the patch. */
  failedNote: string;
  /** Note the method when a fallback (not the chain's first) applied it. */
  noteFallback?: boolean;
}

/**
 * What one suite's harness does at each step of the pipeline; a suite makes one per scoring,
 * so its steps can keep what they learn (the start state's test files, say) in between.
 */
export interface ScoringSteps {
  patch: PatchStep;
  /** The progress message while the tests run. */
  running: string;
  /** Before the patch: what later steps need from the untouched start state. */
  readStartState?(run: ScoringRun): Promise<void>;
  /**
   * After the patch, on the candidate's work tree: test files back as they were, the hidden
   * tests laid down. What the candidate's files make fail here is a wrong answer, never an error.
   */
  layDownTests(run: ScoringRun): Promise<void>;
  /** Runs the tests the suite scores by. */
  runTests(run: ScoringRun): Promise<TestRun>;
  /** The verdict on the run. */
  decide(run: ScoringRun, tests: TestRun): Promise<VerdictBody> | VerdictBody;
}

/**
 * Scores a patch the way the benchmarks do, in a fresh sandbox from the task's untouched start
 * state (never the episode's: nothing the agent left running or cached there can count): the
 * environment prepared, the patch applied, the tests laid down, run and decided by the suite's
 * steps, the log kept. A failure of the harness is `status: "error"`, never a wrong answer;
 * one after the candidate's code began to run is scored again once in a fresh sandbox, and a
 * second one counts against the solution in strict mode (after_candidate.ts).
 */
export async function scoreInFreshSandbox(
  task: Task,
  patch: string,
  deps: ScoreDeps,
  opts: ScoreOptions,
  stepsOf: (task: Task, opts: ScoreOptions) => ScoringSteps,
): Promise<Verdict> {
  const started = Date.now();
  const log: string[] = [`task ${task.suite}/${task.id}`, `patch: ${patch.length} bytes`];
  const finish = verdictWriter(task, deps, log, started);
  const first = await scoreOnce(task, patch, deps, opts, stepsOf, log);
  if ('body' in first) return finish(first.body);
  if (!rescored(first)) return finish(errorBody(first));
  log.push(
    `the harness failed after the candidate's code began to run: scoring again once, in a fresh sandbox`,
    '--- scoring attempt 2 ---',
  );
  opts.progress?.("the scoring sandbox failed after the candidate's code began to run: scoring again in a fresh sandbox");
  const second = await scoreOnce(task, patch, deps, opts, stepsOf, log);
  if ('body' in second) {
    log.push(`outcome: ${second.body.status} (attempt 2)`);
    return finish({ ...second.body, notes: [...second.body.notes, rescoredNote(first.error)] });
  }
  if (!rescored(second)) {
    // Failed before the candidate's code ran, or with a code no candidate causes: the infrastructure's failure.
    log.push(`outcome: error ${second.error.code} (attempt 2${second.afterCandidate ? '' : ", before the candidate's code ran"})`);
    return finish(errorBody(second, [rescoreFailedNote(first.error, second)]));
  }
  const decided = secondFailure(opts.scoring ?? 'strict', first.error, second.error);
  log.push(`outcome: ${decided.note}`);
  if (decided.status === 'failed') return finish({ reward: 0, status: 'failed', tests: [], notes: [...second.notes, decided.note] });
  return finish(errorBody(second, [decided.note]));
}

/**
 * One scoring in one fresh sandbox: a verdict, or the harness's failure
 * and whether the candidate's code had begun to run. CANCELLED is thrown.
 */
async function scoreOnce(
  task: Task,
  patch: string,
  deps: ScoreDeps,
  opts: ScoreOptions,
  stepsOf: (task: Task, opts: ScoreOptions) => ScoringSteps,
  log: string[],
): Promise<{ body: VerdictBody } | (HarnessFailure & { notes: string[] })> {
  const notes: string[] = [];
  let sandbox: Sandbox | undefined;
  let afterCandidate = false;
  try {
    const steps = stepsOf(task, opts);
    opts.progress?.('preparing the environment');
    const env = await deps.sandboxes.prepare(task);
    notes.push(...env.notes);
    opts.progress?.('laying out a fresh sandbox');
    sandbox = await deps.sandboxes.create({
      seed: seedOf(task, env),
      env: sandboxEnv(env),
      labels: { 'benchgym.task': task.id, 'benchgym.role': 'scorer' },
    });
    const run: ScoringRun = { task, env, sandbox, opts, patch, notes, log };
    await steps.readStartState?.(run);

    if (!(await applyCandidatePatch(run, steps.patch))) {
      return { body: { reward: 0, status: 'failed', tests: [], notes: [...notes, steps.patch.failedNote] } };
    }
    try {
      await steps.layDownTests(run);
    } catch (err) {
      const note = candidateNote(err);
      if (!note) throw err;
      log.push(note);
      return { body: { reward: 0, status: 'failed', tests: [], notes: [...notes, note] } };
    }

    opts.progress?.(steps.running);
    // From here on the candidate's code runs (imported by the tests, built, executed).
    afterCandidate = true;
    const tests = await steps.runTests(run);
    log.push(`$ ${tests.command}\nexit ${tests.exec.exitCode}${tests.exec.timedOut ? ' (timed out)' : ''}\n${tests.log}`);
    return { body: await steps.decide(run, tests) };
  } catch (err) {
    const e = toGymError(err);
    if (e.code === 'CANCELLED') throw e;
    log.push(`error ${e.code}${afterCandidate ? " after the candidate's code began to run" : ''}: ${e.message}`);
    return { error: new GymError(harnessErrorCode(e), e.message, e.details), afterCandidate, notes };
  } finally {
    await sandbox?.destroy().catch(() => {});
  }
}

/** The error verdict of a harness failure. */
function errorBody(f: HarnessFailure & { notes: string[] }, extra: string[] = []): VerdictBody {
  return { reward: 0, status: 'error', tests: [], notes: [...f.notes, ...extra], error: { code: f.error.code, message: f.error.message } };
}

/** The code a harness failure is reported with: an infrastructure code or a task defect as it is, anything else INTERNAL. */
export function harnessErrorCode(e: GymError): GymErrorCode {
  return INFRA_CODES.has(e.code) || e.code === 'TASK_INVALID' ? e.code : 'INTERNAL';
}

/** The note of a patch the sandbox refused to apply (it writes inside a .git or through a link out of the workspace): a wrong answer. */
export const PATCH_REFUSED = 'PATCH_REFUSED';

/** Applies the candidate's patch by the suite's chain; false when no method applies it (or the patch is refused). */
async function applyCandidatePatch(run: ScoringRun, step: PatchStep): Promise<boolean> {
  const applied = await run.sandbox.applyPatch(
    run.patch,
    step.chain && { chain: step.chain, resetBetweenTries: step.resetBetweenTries ?? false },
  );
  // The last line says how it went, for whoever greps logs (test_output.txt of a replay).
  run.log.push(
    `apply (${applied.method ?? (applied.refused ? 'refused' : 'failed')}):\n${applied.log}`,
    `BENCHGYM_APPLIED ${applied.ok ? (applied.method ?? 'empty') : 'none'}`,
  );
  if (applied.refused) run.notes.push(`${PATCH_REFUSED}: ${applied.refused}`);
  if (!applied.ok) return false;
  const first = patchMethodLabel((step.chain ?? DEFAULT_PATCH_CHAIN)[0]!);
  if (step.noteFallback && applied.method && applied.method !== 'empty' && applied.method !== first)
    run.notes.push(`patch applied with ${applied.method}`);
  return true;
}

/** Completes a verdict (task, suite, duration) and, with a log directory, keeps the scoring log and points to it. */
function verdictWriter(task: Task, deps: ScoreDeps, log: string[], started: number): (v: VerdictBody) => Promise<Verdict> {
  return async (v) => {
    const verdict: Verdict = { taskId: task.id, suite: task.suite, ...v, durationMs: Date.now() - started };
    if (deps.logDir) {
      const file = path.join(deps.logDir, `${task.suite}-${task.id.replace(/[^\w.-]+/g, '_')}-${randomBytes(4).toString('hex')}.log`);
      await fs.mkdir(deps.logDir, { recursive: true });
      await fs.writeFile(file, log.join('\n') + '\n');
      verdict.logRef = file;
    }
    return verdict;
  };
}
