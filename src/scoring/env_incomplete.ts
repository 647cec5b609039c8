/**
 * A test run that could not get what it needs from its env (Maven offline: an artifact no
 * warm-up resolved). For a candidate that is a failed run, unresolved, with this note: the gold
 * runs in the same env (validate checks that), so a patch that needs more (a dependency it adds)
 * asks for what the task's env does not have; were it an infrastructure error, a patch could
 * leave the denominator by adding one. Where the reference itself, or the untouched start state,
 * cannot get it (validate), the env is at fault and the task is an infrastructure error, never
 * invalid.
 */
export const ENV_INCOMPLETE_NOTE = 'ENV_INCOMPLETE';
