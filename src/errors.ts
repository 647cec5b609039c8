/** String codes callers switch on; the message is for people. */
export type GymErrorCode =
  | 'INVALID_ARGUMENT'
  | 'SUITE_NOT_FOUND'
  | 'TASK_NOT_FOUND'
  | 'TASK_INVALID'
  | 'EPISODE_NOT_FOUND'
  | 'EPISODE_ENDED'
  | 'TOOL_NOT_AVAILABLE'
  | 'BUDGET_EXHAUSTED'
  | 'PATH_OUTSIDE_WORKSPACE'
  | 'FILE_NOT_FOUND'
  | 'NOT_A_FILE'
  | 'NOT_A_DIRECTORY'
  | 'FILE_EXISTS'
  | 'BINARY_FILE'
  | 'FILE_TOO_LARGE'
  | 'DIFF_TOO_LARGE'
  | 'EDIT_NO_MATCH'
  | 'EDIT_AMBIGUOUS'
  | 'NOTHING_TO_UNDO'
  | 'NO_TEST_RUN'
  | 'NO_VISIBLE_TESTS'
  | 'SANDBOX_UNAVAILABLE'
  | 'ENV_BUILD_FAILED'
  | 'ENV_UNAVAILABLE'
  | 'PATCH_APPLY_FAILED'
  | 'CANCELLED'
  | 'CAPACITY'
  | 'UNAUTHORIZED'
  | 'MODEL_UNAVAILABLE'
  | 'INTERNAL';

/** Codes that mean the harness failed, not the solution: never scored as a wrong answer. */
export const INFRA_CODES: ReadonlySet<GymErrorCode> = new Set([
  'SANDBOX_UNAVAILABLE',
  'ENV_BUILD_FAILED',
  'ENV_UNAVAILABLE',
  'CAPACITY',
  'INTERNAL',
]);

export class GymError extends Error {
  readonly code: GymErrorCode;
  readonly details?: Record<string, unknown>;

  constructor(code: GymErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }

  toJSON(): { code: GymErrorCode; message: string; details?: Record<string, unknown> } {
    return { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

/** Wraps anything thrown into a GymError, keeping GymErrors as they are. */
export function toGymError(err: unknown): GymError {
  if (err instanceof GymError) return err;
  if (err instanceof Error && err.name === 'AbortError') return new GymError('CANCELLED', 'the call was cancelled');
  const message = err instanceof Error ? err.message : String(err);
  return new GymError('INTERNAL', message);
}
