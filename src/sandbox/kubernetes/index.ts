export { KubernetesSandboxFactory, loadImageBy, DEFAULT_NAMESPACE, DENY_ALL_POLICY, type KubernetesSandboxOptions } from './factory.ts';
export { KubernetesSandbox } from './sandbox.ts';
export { DEFAULT_KUBERNETES_LIMITS, type KubernetesLimits } from './limits.ts';
