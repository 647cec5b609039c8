import type { GymError, GymErrorCode } from '../errors.ts';
import type { ScoringMode } from './mode.ts';

/**
 * The rule for a harness failure once the candidate's code has begun to run (the step that runs
 * the tests, and every step after it): that code may have caused it (killed the executor, got
 * the container OOM-killed, left the harness something it cannot read), so the failure is no
 * proof of the infrastructure's fault. It is scored again once in a fresh sandbox; a second
 * failure after the candidate's code ran is counted against the solution in strict mode and
 * stays an infrastructure error in faithful mode (the benchmark's own harness would have
 * errored too). Failures before that point (preparing the env, laying out the sandbox, applying
 * the patch, laying down the tests) ran none of the candidate's code: they stay errors, not retried.
 */

/**
 * The codes the candidate's code may cause: the sandbox or its executor lost (a stopped or
 * OOM-killed container included), a slot it took, anything the harness did not expect.
 * ENV_BUILD_FAILED and ENV_UNAVAILABLE (facts of the env, prepared before anything ran) and
 * TASK_INVALID (a defect of the task) are not: a retry cannot change them.
 */
export const CANDIDATE_MAY_CAUSE: ReadonlySet<GymErrorCode> = new Set(['SANDBOX_UNAVAILABLE', 'CAPACITY', 'INTERNAL']);

/** The note of a verdict reached in a second sandbox, after the first failed once the candidate's code ran. */
export const RESCORED_NOTE = 'RESCORED_AFTER_HARNESS_FAILURE';

/** The note of a strict verdict counted failed: the harness failed twice after the candidate's code began to run. */
export const FAILED_AFTER_CANDIDATE_NOTE = 'HARNESS_FAILED_AFTER_CANDIDATE';

/** A harness failure of one scoring, and whether the candidate's code had begun to run. */
export interface HarnessFailure {
  error: GymError;
  afterCandidate: boolean;
}

/** Whether a failure is scored again: after the candidate's code began to run, with a code it may cause. */
export function rescored(f: HarnessFailure): boolean {
  return f.afterCandidate && CANDIDATE_MAY_CAUSE.has(f.error.code);
}

const told = (e: GymError) => `${e.code}: ${e.message.split('\n')[0]!.slice(0, 500)}`;

/** The verdict note when the second scoring decided. */
export function rescoredNote(first: GymError): string {
  return (
    `${RESCORED_NOTE}: the first scoring sandbox failed after the candidate's code ` +
    `began to run (${told(first)}); this verdict is from a second, fresh sandbox`
  );
}

/**
 * The verdict note when the second scoring failed in a way no candidate causes
 * (before its code ran, or an env or task code): the infrastructure's error.
 */
export function rescoreFailedNote(first: GymError, second: HarnessFailure): string {
  const how = second.afterCandidate
    ? `the second failed with ${second.error.code}, which no candidate causes`
    : 'the second failed before it ran';
  return (
    `${RESCORED_NOTE}: the first scoring sandbox failed after the candidate's ` +
    `code began to run (${told(first)}); ${how}: an infrastructure error`
  );
}

/**
 * What a second failure after the candidate's code ran comes to in a mode: strict counts it
 * against the solution (the note says so), faithful keeps the error (the note says it was retried).
 */
export function secondFailure(mode: ScoringMode, first: GymError, second: GymError): { status: 'failed' | 'error'; note: string } {
  const what =
    `${FAILED_AFTER_CANDIDATE_NOTE}: the scoring sandbox failed twice after the ` +
    `candidate's code began to run (1st ${told(first)}; 2nd ${told(second)})`;
  if (mode === 'strict') return { status: 'failed', note: `${what}: counted against the solution (strict scoring)` };
  return { status: 'error', note: `${what}: an infrastructure error (faithful scoring, as the benchmark's harness has it)` };
}
