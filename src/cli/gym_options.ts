import { existsSync } from 'node:fs';
import path from 'node:path';
import { Gym, type GymOptions } from '../episode/gym.ts';
import { GymError } from '../errors.ts';
import type { KubernetesSandboxFactory } from '../sandbox/kubernetes/index.ts';
import { scoringFlag } from '../scoring/mode.ts';
import { SuiteRegistry } from '../tasks/registry.ts';
import { loadSuites, type Composition } from './composition.ts';
import { intFlag } from './options.ts';

/** The flags of every command that builds a gym (serve, mcp, tasks, validate, run). */
export const GYM_FLAGS = {
  suite: { type: 'string', multiple: true },
  'data-dir': { type: 'string' },
  'cache-dir': { type: 'string' },
  sandbox: { type: 'string' },
  isolation: { type: 'string' },
  'server-id': { type: 'string' },
  pool: { type: 'string' },
  'max-containers': { type: 'string' },
  kubeconfig: { type: 'string' },
  namespace: { type: 'string' },
  registry: { type: 'string' },
  'runtime-class': { type: 'string' },
  'exact-python': { type: 'boolean' },
  'repos-dir': { type: 'string' },
  scoring: { type: 'string' },
  gradle: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface GymFlagValues {
  suite?: string[];
  'data-dir'?: string;
  'cache-dir'?: string;
  sandbox?: string;
  isolation?: string;
  'server-id'?: string;
  pool?: string;
  'max-containers'?: string;
  kubeconfig?: string;
  namespace?: string;
  registry?: string;
  'runtime-class'?: string;
  'exact-python'?: boolean;
  'repos-dir'?: string;
  scoring?: string;
  gradle?: string;
}

/** The --help lines of GYM_FLAGS. */
export const GYM_FLAGS_USAGE = `Common options:
  --suite ID[=PATH]  a suite to serve, repeatable (default examples); PATH: its dataset, or a directory suite
  --data-dir DIR     trajectories, scoring logs and sandboxes (default $BENCHGYM_HOME or ~/.cache/benchgym)
  --cache-dir DIR    built envs (venvs, the Maven repository) and the suites' own caches, each in DIR/<suite>
                     (CoderEval's projects, HumanEvo's workspaces; default $BENCHGYM_CACHE or the data dir)
  --repos-dir DIR    local git mirrors of repositories (bare or not: owner/name, owner__name, owner+name, ...) for
                     suites that check out repositories; else they are cloned from GitHub
  --isolation MODE   auto | bwrap | none: bubblewrap for the local sandbox (default auto)
  --scoring MODE     strict | faithful (default strict): strict turns each known scoring trick into reward 0
                     with a TAMPER_SUSPECTED note, faithful is the benchmark's own harness
                     (docs/ARCHITECTURE.md#scoring-modes)
  --gradle PATH      a Gradle used instead of projects' wrappers (a distribution directory or zip, or an
                     installed gradle; default $BENCHGYM_GRADLE); without it a wrapper whose distribution
                     cannot be reached is ENV_UNAVAILABLE
  --sandbox MODE     local | docker (default local); docker: one hardened container per episode, with
                     --pool N (ready containers per hot image, default 1), --max-containers N (default 32),
                     --server-id ID, --exact-python (refuse the nearest Python base image); kubernetes: one
                     hardened pod per episode, with --kubeconfig PATH (default $KUBECONFIG or in-cluster),
                     --namespace NS (default benchgym), --registry HOST/PREFIX (push env images there; else
                     they must be on the nodes, or $BENCHGYM_KUBERNETES_LOAD_IMAGE names a program
                     run with each image to put it there), --runtime-class NAME, --pool N (ready pods per hot
                     image, default 1), --max-containers N (pods), --server-id ID`;

export function sandboxFlag(value: string | undefined): 'local' | 'docker' | 'kubernetes' {
  const backend = value ?? 'local';
  if (backend !== 'local' && backend !== 'docker' && backend !== 'kubernetes')
    throw new GymError('INVALID_ARGUMENT', `invalid --sandbox: '${backend}' (local, docker or kubernetes)`);
  return backend;
}

export function isolationFlag(value: string | undefined): NonNullable<GymOptions['isolation']> {
  const isolation = value ?? 'auto';
  if (!['auto', 'bwrap', 'none'].includes(isolation))
    throw new GymError('INVALID_ARGUMENT', `invalid --isolation: '${isolation}' (auto, bwrap or none)`);
  return isolation as NonNullable<GymOptions['isolation']>;
}

export function reposDirFlag(value: string | undefined): string | undefined {
  if (value !== undefined && !existsSync(value)) throw new GymError('INVALID_ARGUMENT', `invalid --repos-dir: ${value} does not exist`);
  return value;
}

/** The --gradle value (else $BENCHGYM_GRADLE), checked to exist as a path or a command name. */
export function gradleFlag(value: string | undefined): string | undefined {
  const given = value ?? (process.env.BENCHGYM_GRADLE || undefined);
  if (given !== undefined && given.includes('/') && !existsSync(given))
    throw new GymError(
      'INVALID_ARGUMENT',
      `invalid --gradle: ${given} does not exist (a Gradle distribution directory or zip, or an installed gradle)`,
    );
  return given === undefined ? undefined : given.includes('/') ? path.resolve(given) : given;
}

/** The cache directory: --cache-dir, else $BENCHGYM_CACHE. */
export const cacheDirOf = (values: { 'cache-dir'?: string }) => values['cache-dir'] ?? process.env.BENCHGYM_CACHE;

/** The ids of `specs` (`ID` or `ID=PATH`). */
const idsOf = (specs: readonly string[]) => specs.map((spec) => spec.split('=')[0]!);

/** The gym the flags describe, serving the --suite suites (default: the first the root registers); it loads only those. */
export async function gymFrom(values: GymFlagValues, root: Composition): Promise<Gym> {
  const backend = sandboxFlag(values.sandbox);
  const isolation = isolationFlag(values.isolation);
  const reposDir = reposDirFlag(values['repos-dir']);
  const served = values.suite?.length ? values.suite : root.suites.slice(0, 1).map((s) => s.id);
  // Only the flag: without it each suite keeps its own variable ($BENCHGYM_CODEREVAL_CACHE, ...) or $BENCHGYM_CACHE.
  const suiteOpts = { reposDir, ...(values['cache-dir'] ? { cacheDir: values['cache-dir'] } : {}) };
  const registry = new SuiteRegistry(await loadSuites(root, suiteOpts, idsOf(served)));
  for (const spec of served) {
    const id = idsOf([spec])[0]!;
    // Said before the registry would, with every suite the root registers (not only those loaded).
    if (!spec.includes('=') && !root.suites.some((s) => s.id === id)) {
      throw new GymError(
        'SUITE_NOT_FOUND',
        `unknown suite '${id}' (known: ${root.suites.map((s) => s.id).join(', ')}); give a directory suite as ${id}=PATH`,
      );
    }
    registry.enable(spec);
  }
  const cacheDir = cacheDirOf(values);
  const gradle = gradleFlag(values.gradle);
  const opts: GymOptions = {
    registry,
    dataDir: values['data-dir'],
    cacheDir,
    isolation,
    scoring: scoringFlag(values.scoring, 'strict'),
    ...(gradle ? { gradle } : {}),
  };
  if (backend === 'docker') {
    const { DockerSandboxFactory } = await import('../sandbox/docker/index.ts');
    opts.sandboxes = new DockerSandboxFactory({
      serverId: values['server-id'] ?? 'default',
      poolSize: intFlag(values.pool, 'pool', 1, 0, 64),
      maxContainers: intFlag(values['max-containers'], 'max-containers', 32, 1, 4096),
      images: { exactPython: values['exact-python'] ?? false, ...(cacheDir ? { cacheDir } : {}), ...(gradle ? { gradle } : {}) },
    });
  }
  if (backend === 'kubernetes')
    opts.sandboxes = await kubernetesFactoryFrom(values, { ...(cacheDir ? { cacheDir } : {}), ...(gradle ? { gradle } : {}) });
  return new Gym(opts);
}

/** The kubernetes backend the flags describe (--kubeconfig, --namespace, --registry, --runtime-class, --pool). */
export async function kubernetesFactoryFrom(
  values: Pick<
    GymFlagValues,
    'kubeconfig' | 'namespace' | 'registry' | 'runtime-class' | 'server-id' | 'pool' | 'max-containers' | 'exact-python'
  >,
  images: { cacheDir?: string; gradle?: string },
): Promise<KubernetesSandboxFactory> {
  const namespace = values.namespace ?? 'benchgym';
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace))
    throw new GymError('INVALID_ARGUMENT', `invalid --namespace: '${namespace}' (a DNS label: lower-case letters, digits, '-')`);
  if (values.registry !== undefined && !/^[A-Za-z0-9.-]+(:\d+)?(\/[a-z0-9._/-]+)?$/.test(values.registry))
    throw new GymError('INVALID_ARGUMENT', `invalid --registry: '${values.registry}' (HOST[:PORT]/PREFIX)`);
  // @kubernetes/client-node alone takes seconds to import: only when this backend is chosen.
  const { KubernetesSandboxFactory, loadImageBy } = await import('../sandbox/kubernetes/index.ts');
  return new KubernetesSandboxFactory({
    ...(values.kubeconfig ? { kubeconfig: path.resolve(values.kubeconfig) } : {}),
    namespace,
    ...(values.registry ? { registry: values.registry } : {}),
    ...(values['runtime-class'] ? { runtimeClassName: values['runtime-class'] } : {}),
    // Without a registry: a program that puts each env image on the nodes (the project cluster's load-image.sh).
    ...(!values.registry && process.env.BENCHGYM_KUBERNETES_LOAD_IMAGE
      ? { loadImage: loadImageBy(process.env.BENCHGYM_KUBERNETES_LOAD_IMAGE) }
      : {}),
    serverId: values['server-id'] ?? 'default',
    poolSize: intFlag(values.pool, 'pool', 1, 0, 64),
    maxPods: intFlag(values['max-containers'], 'max-containers', 32, 1, 4096),
    images: { exactPython: values['exact-python'] ?? false, ...images },
  });
}
