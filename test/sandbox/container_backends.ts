import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { DockerSandboxFactory, dockerClient, type DockerSandbox } from '../../src/sandbox/docker/index.ts';
import { dockerExec } from '../../src/sandbox/docker/exec.ts';
import type { KubernetesLimits, KubernetesSandbox } from '../../src/sandbox/kubernetes/index.ts';
import { loadKubeConfig } from '../../src/sandbox/kubernetes/client.ts';
import { podExec } from '../../src/sandbox/kubernetes/exec.ts';
import type { RunResult } from '../../src/sandbox/container/index.ts';
import type { Sandbox, SandboxFactory } from '../../src/sandbox/types.ts';
import { PROJECT_ROOT } from '../../src/tasks/registry.ts';
import { dockerSkipReason } from './docker/skip.ts';
import { kubernetesSkipReason, loadIntoCluster, testFactory, testKubeconfig } from './kubernetes/skip.ts';

const NAMESPACE = 'benchgym-test';

/** What a test needs of a container backend: the same checks run over each (conformance_containers.cases.ts). */
export interface ContainerBackendKit {
  name: 'docker' | 'kubernetes';
  /** Why it cannot be tested here (the images named must be built), or null. */
  skip(images?: string[]): Promise<string | null>;
  /** A factory with a fresh server id. */
  factory(opts?: {
    poolSize?: number;
    images?: { cacheDir: string };
    /** Docker takes the container limits; Kubernetes those and its own (pids are the kubelet's there). */
    limits?: Partial<KubernetesLimits>;
  }): SandboxFactory & { close(): Promise<void>; warm(image: string): Promise<void>; stats(): { live: number } };
  /** Puts a locally built image where the backend's containers start from. */
  load(image: string): Promise<void>;
  /** A command in the sandbox's container as its root, past the sandbox: what no command of the agent's may do. */
  asRoot(sb: Sandbox, cmd: string[]): Promise<RunResult>;
  /** Names the sandbox's container and how often it restarted ("<name> restarts <n>"): a replaced or restarted one differs. */
  instance(sb: Sandbox): Promise<string>;
  /** `benchgym` arguments and environment that select the backend. */
  cli: { args: string[]; env: NodeJS.ProcessEnv };
  /** The containers (pods) of a server id, not being removed; `label` narrows them (k=v). */
  sandboxesOf(serverId: string, label?: string): Promise<string[]>;
  /** What else of a server id outlives its containers (Docker's volumes). */
  volumesOf(serverId: string): Promise<string[]>;
  /** Removes everything of a server id (a test's cleanup). */
  purge(serverId: string): Promise<void>;
}

const docker: ContainerBackendKit = {
  name: 'docker',
  skip: (images) => dockerSkipReason(images),
  factory: (opts = {}) => new DockerSandboxFactory({ serverId: `test-${randomBytes(4).toString('hex')}`, poolSize: 0, ...opts }),
  load: async () => {},
  asRoot: (sb, cmd) => dockerExec((sb as DockerSandbox).transport.container, { cmd, maxOutputBytes: 64 * 1024, timeoutMs: 10_000 }),
  instance: async (sb) => {
    const c = await (sb as DockerSandbox).transport.container.inspect();
    return `${c.Id} started ${c.State.StartedAt} restarts ${c.RestartCount}`;
  },
  cli: { args: ['--sandbox', 'docker'], env: process.env },
  sandboxesOf: async (serverId, label) => {
    const filters = JSON.stringify({ label: [`benchgym.server=${serverId}`, ...(label ? [label] : [])] });
    return (await dockerClient().listContainers({ all: true, filters })).map((c) => c.Id);
  },
  volumesOf: async (serverId) => {
    const { Volumes } = await dockerClient().listVolumes({ filters: JSON.stringify({ label: [`benchgym.server=${serverId}`] }) });
    return (Volumes ?? []).map((v) => v.Name);
  },
  purge: async (serverId) => {
    const d = dockerClient();
    for (const id of await docker.sandboxesOf(serverId))
      await d
        .getContainer(id)
        .remove({ force: true, v: true })
        .catch(() => {});
    for (const name of await docker.volumesOf(serverId))
      await d
        .getVolume(name)
        .remove({ force: true })
        .catch(() => {});
  },
};

const core = () => loadKubeConfig(testKubeconfig()).makeApiClient(CoreV1Api);

const kubernetes: ContainerBackendKit = {
  name: 'kubernetes',
  skip: async (images) => (await kubernetesSkipReason()) ?? dockerSkipReason(images),
  factory: (opts = {}) => testFactory(opts),
  load: loadIntoCluster,
  asRoot: (sb, cmd) =>
    podExec({ ...(sb as KubernetesSandbox).transport.ref, user: undefined }, { cmd, maxOutputBytes: 64 * 1024, timeoutMs: 10_000 }),
  instance: async (sb) => {
    const { pod, namespace } = (sb as KubernetesSandbox).transport.ref;
    const status = (await core().readNamespacedPod({ name: pod, namespace })).status;
    return `${pod} restarts ${status?.containerStatuses?.[0]?.restartCount}`;
  },
  cli: {
    args: ['--sandbox', 'kubernetes', '--kubeconfig', testKubeconfig(), '--namespace', NAMESPACE],
    env: { ...process.env, BENCHGYM_KUBERNETES_LOAD_IMAGE: path.join(PROJECT_ROOT, 'docker', 'cluster', 'load-image.sh') },
  },
  sandboxesOf: async (serverId, label) => {
    const list = await core().listNamespacedPod({
      namespace: NAMESPACE,
      labelSelector: [`benchgym.server=${serverId}`, ...(label ? [label] : [])].join(','),
    });
    return list.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata!.name!);
  },
  volumesOf: async () => [],
  purge: async (serverId) => {
    for (const name of await kubernetes.sandboxesOf(serverId))
      await core()
        .deleteNamespacedPod({ name, namespace: NAMESPACE, gracePeriodSeconds: 0 })
        .catch(() => {});
  },
};

/** The container backends, each tested by the same checks. */
export const CONTAINER_BACKENDS: readonly ContainerBackendKit[] = [docker, kubernetes];
