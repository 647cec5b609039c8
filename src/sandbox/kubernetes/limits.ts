import { DEFAULT_CONTAINER_LIMITS, type ContainerLimits } from '../container/limits.ts';

/** A container's limits, plus what only a pod has. pids are the kubelet's (`podPidsLimit`), not the pod's. */
export interface KubernetesLimits extends ContainerLimits {
  /** The pod's `activeDeadlineSeconds`: the cluster ends a pod this server forgot. */
  activeDeadlineSeconds: number;
  /** How long a pod may take to be scheduled, pulled and started before SANDBOX_UNAVAILABLE. */
  startTimeoutMs: number;
  /** The container's ephemeral-storage limit (its writable layer and logs; the workspace is in memory). */
  ephemeralBytes: number;
  /** The CPU the scheduler reserves per pod (millicores): how densely pods are packed on a node. */
  requestCpuMillis: number;
  /**
   * The largest file a command may write (a hard RLIMIT_FSIZE, which a pod without
   * CAP_SYS_RESOURCE cannot raise). The kubelet bind-mounts /dev/termination-log (and
   * /etc/hosts) writable from the node's disk, and the termination log is outside the
   * ephemeral-storage accounting: without this cap one command could fill the node's disk.
   */
  maxFileBytes: number;
}

export const DEFAULT_KUBERNETES_LIMITS: KubernetesLimits = {
  ...DEFAULT_CONTAINER_LIMITS,
  activeDeadlineSeconds: 24 * 3600,
  startTimeoutMs: 120_000,
  ephemeralBytes: 256 * 1024 ** 2,
  requestCpuMillis: 100,
  maxFileBytes: DEFAULT_CONTAINER_LIMITS.workspaceBytes,
};

/**
 * `ulimit -f` (soft and hard) for `sh`, which counts 512-byte blocks (dash; bash only
 * in POSIX mode): run first in the exec wrapper, it caps everything the command starts.
 */
export function fileSizeLimitScript(maxFileBytes: number): string {
  return `ulimit -f ${Math.max(1, Math.floor(maxFileBytes / 512))}`;
}
