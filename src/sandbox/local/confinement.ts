import type { Cgroup } from './cgroup.ts';

/**
 * How the sandbox's executor keeps out of its commands' reach (kill -9 -1, ptrace, prlimit):
 * 'uid': it stays root with CAP_SETUID and CAP_SETGID only and runs each command as `user`;
 * 'pid-namespace': one uid for both, each command in a user and pid namespace of its own;
 * 'none': neither works here (a root server whose sandbox uid cannot reach the workspace, or no
 * user namespaces): a command can end the executor, and its sandbox with it.
 */
export type ExecutorIsolation = 'uid' | 'pid-namespace' | 'none';

/** What confines one sandbox's commands besides bubblewrap: its cgroup and the uid they run as. */
export interface Confinement {
  cgroup?: Cgroup;
  /** Set when the server is root: commands drop to this uid inside bubblewrap, the workspace is theirs. */
  user?: { uid: number; gid: number };
  /** How the executor is out of the commands' reach. */
  executorIsolation: ExecutorIsolation;
  /** The cgroup bounds its pids (then RLIMIT_NPROC, shared by every process of the uid, is not set). */
  pidsBounded?: boolean;
  /** The cgroup's memory limit, when it bounds memory (told to JVMs: jvm_memory.ts). */
  memoryBytes?: number;
  /** The sentence for Sandbox.isolation on processes and limits. */
  describe: string;
}

/** The executor's flags for its isolation (its go/identity.go). */
export function executorIsolationFlags(c: Confinement): string[] {
  if (c.executorIsolation === 'uid' && c.user) return ['--user', `${c.user.uid}:${c.user.gid}`];
  if (c.executorIsolation === 'pid-namespace') return ['--pid-namespace'];
  return [];
}

/** The sentence for Sandbox.isolation on how the executor is kept from its commands. */
export function describeExecutorIsolation(mode: ExecutorIsolation, user?: { uid: number }): string {
  if (mode === 'uid') return `the executor stays root with only CAP_SETUID and CAP_SETGID, out of reach of uid ${user?.uid}`;
  if (mode === 'pid-namespace') return 'each command in a user and pid namespace of its own, out of reach of the executor';
  return "the executor shares the commands' uid and pid namespace: a command can end it";
}
