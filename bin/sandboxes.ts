/**
 * The sandbox backends `--sandbox` chooses from, registered by name in the composition root:
 * each with a line on what it is, its own flags, and a loader of its builder (the flags' zod
 * schema and the factory, in the backend's folder), imported only when it is chosen. The first
 * is the default. A fourth backend is one more entry here.
 */
import type { SandboxBackend } from '../src/sandbox/backend.ts';

/** The flags both container backends take. */
const CONTAINER_FLAGS = {
  'server-id': { type: 'string' },
  pool: { type: 'string' },
  'max-containers': { type: 'string' },
  'exact-python': { type: 'boolean' },
} as const;

/** The built-in backends, the default first. */
export const BUILTIN_SANDBOXES: readonly SandboxBackend[] = [
  {
    name: 'local',
    summary: 'processes in a workspace folder on this machine, under bubblewrap where it works',
    flags: { isolation: { type: 'string' } },
    usage: '      --isolation MODE (auto | bwrap | none: bubblewrap for its commands, default auto)',
    load: async () => (await import('../src/sandbox/local/index.ts')).LOCAL_BUILDER,
  },
  {
    name: 'docker',
    summary: 'one hardened container per episode (no network; bounded memory, CPU, pids, disk)',
    flags: CONTAINER_FLAGS,
    usage:
      '      --pool N (ready containers per hot image, default 1), --max-containers N (default 32), --server-id ID,\n' +
      '      --exact-python (refuse the nearest Python base image)',
    load: async () => (await import('../src/sandbox/docker/index.ts')).DOCKER_BUILDER,
  },
  {
    name: 'kubernetes',
    summary: 'one hardened pod per episode, commands through the API server',
    flags: {
      ...CONTAINER_FLAGS,
      kubeconfig: { type: 'string' },
      namespace: { type: 'string' },
      registry: { type: 'string' },
      'runtime-class': { type: 'string' },
    },
    usage:
      '      --kubeconfig PATH (default $KUBECONFIG or in-cluster), --namespace NS (default benchgym),\n' +
      '      --registry HOST/PREFIX (push env images there; else they must be on the nodes, or\n' +
      '      $BENCHGYM_KUBERNETES_LOAD_IMAGE names a program run with each image to put it there),\n' +
      '      --runtime-class NAME, --pool N (ready pods per hot image, default 1), --max-containers N (pods),\n' +
      '      --server-id ID, --exact-python',
    // @kubernetes/client-node alone takes seconds to import: only when this backend is chosen.
    load: async () => (await import('../src/sandbox/kubernetes/index.ts')).KUBERNETES_BUILDER,
  },
];
