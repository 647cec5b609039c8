import { DEFAULT_DOCKER_LIMITS, type DockerLimits } from '../docker/limits.ts';

/** The Docker backend's limits, plus what only a pod has. pids are the kubelet's (`podPidsLimit`), not the pod's. */
export interface KubernetesLimits extends DockerLimits {
  /** The pod's `activeDeadlineSeconds`: the cluster ends a pod this server forgot. */
  activeDeadlineSeconds: number;
  /** How long a pod may take to be scheduled, pulled and started before SANDBOX_UNAVAILABLE. */
  startTimeoutMs: number;
  /** The container's ephemeral-storage limit (its writable layer and logs; the workspace is in memory). */
  ephemeralBytes: number;
  /** The CPU the scheduler reserves per pod (millicores): how densely pods are packed on a node. */
  requestCpuMillis: number;
}

export const DEFAULT_KUBERNETES_LIMITS: KubernetesLimits = {
  ...DEFAULT_DOCKER_LIMITS,
  activeDeadlineSeconds: 24 * 3600,
  startTimeoutMs: 120_000,
  ephemeralBytes: 256 * 1024 ** 2,
  requestCpuMillis: 100,
};
