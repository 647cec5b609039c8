import type { ExecResult } from './types.ts';

/**
 * What a backend adds to a command's result when the sandbox's memory limit killed one of its
 * processes (the local cgroup's OOM count went up while it ran; a container's OOMKilled). Set
 * by the backend, outside anything the command writes, so printing the note does not fake it.
 */
export interface MemoryLimitMark {
  oomKilled?: true;
}

/** The line a backend appends to the command's stderr when its memory limit killed a process. */
export const OOM_NOTE = "benchgym: a process was killed by the sandbox's memory limit";

/**
 * The verdict note of a scoring whose test run the memory limit killed. A candidate's patch is
 * judged within the memory its task allows (the gold fits: validate checks it), so the verdict
 * stays unresolved; where the reference itself is killed (validate), the machine is at fault and
 * the task is an infrastructure error, never invalid.
 */
export const OOM_KILLED_NOTE = 'OOM_KILLED';

/** Whether the sandbox's memory limit killed a process of this command (the backend's mark, not its output). */
export function killedByMemoryLimit(exec: ExecResult): boolean {
  return (exec as ExecResult & MemoryLimitMark).oomKilled === true;
}
