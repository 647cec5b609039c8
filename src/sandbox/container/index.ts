// One container sandbox over a transport per backend (Docker, Kubernetes): what the backends build on.
export { ContainerSandbox, type ContainerSandboxHooks } from './sandbox.ts';
export { ContainerSandboxFactory, type ContainerBackend, type ContainerFactoryOptions } from './factory.ts';
export type { ContainerTransport, RunOptions, RunResult, TerminalOptions } from './transport.ts';
export { DEFAULT_CONTAINER_LIMITS, type ContainerLimits } from './limits.ts';
export { WORKDIR } from './workspace.ts';
