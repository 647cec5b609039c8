import { DEFAULT_MAX_DIFF_BYTES } from '../diff_limit.ts';

export interface LocalLimits {
  cpuSeconds: number;
  fileSizeBytes: number;
  processes: number;
  openFiles: number;
  defaultTimeoutMs: number;
  maxOutputBytes: number;
  /** Between SIGTERM and SIGKILL at a timeout. */
  killGraceMs: number;
  /** The largest diff() returns; a bigger one is DIFF_TOO_LARGE. */
  maxDiffBytes: number;
  /** Processes and threads of one sandbox at once (cgroup pids.max; RLIMIT_NPROC is per uid, not per sandbox). */
  pids: number;
  /** Memory of one sandbox (cgroup), unless its task asks for more. */
  memoryBytes: number;
  /** Size of the private /tmp under bubblewrap (a tmpfs, charged to the sandbox's memory). */
  tmpBytes: number;
  /** Bytes the workspace and home may hold; a command that grows them past it is stopped (disk_guard.ts). */
  diskBytes: number;
  /** How often a running command's disk use is measured. */
  diskCheckMs: number;
}

export const DEFAULT_LOCAL_LIMITS: LocalLimits = {
  cpuSeconds: 900,
  fileSizeBytes: 1 << 30,
  processes: 4096,
  openFiles: 4096,
  defaultTimeoutMs: 120_000,
  maxOutputBytes: 256 * 1024,
  killGraceMs: 1000,
  maxDiffBytes: DEFAULT_MAX_DIFF_BYTES,
  pids: 1024,
  memoryBytes: 2 * 1024 ** 3,
  tmpBytes: 512 * 1024 ** 2,
  diskBytes: 4 * 1024 ** 3,
  diskCheckMs: 1000,
};
