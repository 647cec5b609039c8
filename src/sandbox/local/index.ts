// The local backend's public surface: what the CLI, the gym, tests and benchmarks import.
export { LocalSandboxFactory, type LocalSandboxOptions } from './factory.ts';
export { LocalInstanceFactory, type LocalInstanceOptions } from './instance.ts';
export { LocalSandbox } from './sandbox.ts';
export { bubblewrapAvailable } from './bubblewrap.ts';
export type { Confinement } from './confinement.ts';
export { DEFAULT_LOCAL_LIMITS, type LocalLimits } from './limits.ts';
export { localExecutorBinary } from './executor.ts';
export { claimSandboxDir, removeStaleSandboxDirs } from './stale.ts';
export { LOCAL_BUILDER } from './backend.ts';
