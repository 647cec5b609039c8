import type { Cgroup } from './cgroup.ts';

/** What confines one sandbox's commands besides bubblewrap: its cgroup and the uid they run as. */
export interface Confinement {
  cgroup?: Cgroup;
  /** Set when the server is root: commands drop to this uid inside bubblewrap, the workspace is theirs. */
  user?: { uid: number; gid: number };
  /** The cgroup bounds its pids (then RLIMIT_NPROC, shared by every process of the uid, is not set). */
  pidsBounded?: boolean;
  /** The cgroup's memory limit, when it bounds memory (told to JVMs: jvm_memory.ts). */
  memoryBytes?: number;
  /** The sentence for Sandbox.isolation on processes and limits. */
  describe: string;
}

/** BENCHGYM_SANDBOX_UID=uid[:gid] (gid defaults to the uid), else nobody (65534). */
export function sandboxUserFromEnv(): { uid: number; gid: number } {
  const m = /^(\d+)(?::(\d+))?$/.exec(process.env.BENCHGYM_SANDBOX_UID ?? '');
  const uid = m ? Number(m[1]) : 65534;
  const gid = m?.[2] !== undefined ? Number(m[2]) : m ? uid : 65534;
  // Never root: that would undo the point of dropping privileges.
  return uid === 0 || gid === 0 ? { uid: 65534, gid: 65534 } : { uid, gid };
}
