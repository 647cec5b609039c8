// The Kubernetes backend's public surface: what the CLI, tests and benchmarks import.
import type { ContainerSandbox } from '../container/sandbox.ts';
import type { PodTransport } from './transport.ts';

export { KubernetesSandboxFactory, loadImageBy, DEFAULT_NAMESPACE, DENY_ALL_POLICY, type KubernetesSandboxOptions } from './factory.ts';
export { PodTransport } from './transport.ts';
export { DEFAULT_KUBERNETES_LIMITS, type KubernetesLimits } from './limits.ts';
/** An episode's pod: the container sandbox over the API server's exec. */
export type KubernetesSandbox = ContainerSandbox<PodTransport>;
export { KUBERNETES_BUILDER } from './backend.ts';
