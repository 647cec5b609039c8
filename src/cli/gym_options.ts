import { existsSync } from 'node:fs';
import { Gym, type GymOptions } from '../episode/gym.ts';
import { GymError } from '../errors.ts';
import { DockerSandboxFactory } from '../sandbox/docker/index.ts';
import { scoringFlag } from '../scoring/mode.ts';
import { SuiteRegistry } from '../tasks/registry.ts';
import type { Composition } from './composition.ts';
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
  'exact-python': { type: 'boolean' },
  'repos-dir': { type: 'string' },
  scoring: { type: 'string' },
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
  'exact-python'?: boolean;
  'repos-dir'?: string;
  scoring?: string;
}

/** The --help lines of GYM_FLAGS. */
export const GYM_FLAGS_USAGE = `Common options:
  --suite ID[=PATH]  a suite to serve, repeatable (default examples); PATH: its dataset, or a directory suite
  --data-dir DIR     trajectories, scoring logs and sandboxes (default $BENCHGYM_HOME or ~/.cache/benchgym)
  --cache-dir DIR    built envs: venvs and the Maven repository (default $BENCHGYM_CACHE or the data dir)
  --repos-dir DIR    local git mirrors of repositories (bare or not: owner/name, owner__name, owner+name, ...) for
                     suites that check out repositories; else they are cloned from GitHub
  --isolation MODE   auto | bwrap | none: bubblewrap for the local sandbox (default auto)
  --scoring MODE     strict | faithful (default strict): strict turns each known scoring trick into reward 0
                     with a TAMPER_SUSPECTED note, faithful is the benchmark's own harness
                     (docs/ARCHITECTURE.md#scoring-modes)
  --sandbox MODE     local | docker (default local); docker: one hardened container per episode, with
                     --pool N (ready containers per hot image, default 1), --max-containers N (default 32),
                     --server-id ID, --exact-python (refuse the nearest Python base image)`;

export function sandboxFlag(value: string | undefined): 'local' | 'docker' {
  const backend = value ?? 'local';
  if (backend !== 'local' && backend !== 'docker') throw new GymError('INVALID_ARGUMENT', `invalid --sandbox: '${backend}' (local or docker)`);
  return backend;
}

export function isolationFlag(value: string | undefined): NonNullable<GymOptions['isolation']> {
  const isolation = value ?? 'auto';
  if (!['auto', 'bwrap', 'none'].includes(isolation)) throw new GymError('INVALID_ARGUMENT', `invalid --isolation: '${isolation}' (auto, bwrap or none)`);
  return isolation as NonNullable<GymOptions['isolation']>;
}

export function reposDirFlag(value: string | undefined): string | undefined {
  if (value !== undefined && !existsSync(value)) throw new GymError('INVALID_ARGUMENT', `invalid --repos-dir: ${value} does not exist`);
  return value;
}

/** The cache directory: --cache-dir, else $BENCHGYM_CACHE. */
export const cacheDirOf = (values: { 'cache-dir'?: string }) => values['cache-dir'] ?? process.env.BENCHGYM_CACHE;

/** The gym the flags describe, serving the --suite suites (default: the first the root registers). */
export function gymFrom(values: GymFlagValues, root: Composition): Gym {
  const backend = sandboxFlag(values.sandbox);
  const isolation = isolationFlag(values.isolation);
  const reposDir = reposDirFlag(values['repos-dir']);
  const known = root.suites({ reposDir });
  const registry = new SuiteRegistry(known);
  const served = values.suite?.length ? values.suite : known.slice(0, 1).map((s) => s.id);
  for (const spec of served) registry.enable(spec);
  const cacheDir = cacheDirOf(values);
  const opts: GymOptions = { registry, dataDir: values['data-dir'], cacheDir, isolation, scoring: scoringFlag(values.scoring, 'strict') };
  if (backend === 'docker') {
    opts.sandboxes = new DockerSandboxFactory({
      serverId: values['server-id'] ?? 'default',
      poolSize: intFlag(values.pool, 'pool', 1, 0, 64),
      maxContainers: intFlag(values['max-containers'], 'max-containers', 32, 1, 4096),
      images: { exactPython: values['exact-python'] ?? false, ...(cacheDir ? { cacheDir } : {}) },
    });
  }
  return new Gym(opts);
}
