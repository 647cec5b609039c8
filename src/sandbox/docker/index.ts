// The Docker backend's public surface: what the CLI, the server, tests and benchmarks import.
export { DockerSandboxFactory, type DockerSandboxOptions } from './factory.ts';
export { DockerSandbox, WORKDIR } from './sandbox.ts';
export { DEFAULT_DOCKER_LIMITS, type DockerLimits } from './limits.ts';
export { reapStale } from './reaper.ts';
