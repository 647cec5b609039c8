// The Docker backend's public surface: what the CLI, the server, tests and benchmarks import.
import type { ContainerSandbox } from '../container/sandbox.ts';
import type { DockerTransport } from './transport.ts';

export { DockerSandboxFactory, type DockerSandboxOptions } from './factory.ts';
export { DockerTransport } from './transport.ts';
export { WORKDIR } from '../container/workspace.ts';
export { DEFAULT_CONTAINER_LIMITS as DEFAULT_DOCKER_LIMITS, type ContainerLimits as DockerLimits } from '../container/limits.ts';
export { reapStale } from './reaper.ts';
export { dockerClient, dockerAvailable, dockerError } from './client.ts';
/** An episode's Docker container: the container sandbox over `docker exec`. */
export type DockerSandbox = ContainerSandbox<DockerTransport>;
export { DOCKER_BUILDER } from './backend.ts';
