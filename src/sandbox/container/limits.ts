import { DEFAULT_MAX_DIFF_BYTES } from '../diff_limit.ts';

/** What bounds one container sandbox, whichever backend runs it. */
export interface ContainerLimits {
  memoryBytes: number;
  nanoCpus: number;
  pids: number;
  openFiles: number;
  /** Size of the tmpfs workspace volume and of /tmp: a full disk stays inside the sandbox. */
  workspaceBytes: number;
  tmpBytes: number;
  defaultTimeoutMs: number;
  maxOutputBytes: number;
  /** The largest diff() returns; a bigger one is DIFF_TOO_LARGE. */
  maxDiffBytes: number;
}

export const DEFAULT_CONTAINER_LIMITS: ContainerLimits = {
  memoryBytes: 2 * 1024 ** 3,
  nanoCpus: 1e9,
  pids: 512,
  openFiles: 4096,
  workspaceBytes: 1024 ** 3,
  tmpBytes: 512 * 1024 ** 2,
  defaultTimeoutMs: 120_000,
  maxOutputBytes: 256 * 1024,
  maxDiffBytes: DEFAULT_MAX_DIFF_BYTES,
};
