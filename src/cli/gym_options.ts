import { existsSync } from 'node:fs';
import path from 'node:path';
import { Gym } from '../episode/gym.ts';
import { GymError } from '../errors.ts';
import { defaultDataDir } from '../project.ts';
import {
  backendFlags,
  backendNamed,
  backendUsage,
  parseBackendOptions,
  type BackendFlag,
  type SandboxBackendContext,
} from '../sandbox/backend.ts';
import { scoringFlag } from '../scoring/mode.ts';
import { SuiteRegistry } from '../tasks/registry.ts';
import { loadSuites, type Composition } from './composition.ts';

/** The flags of every command that builds a gym (serve, mcp, tasks, validate, run), besides the backends' own (gymFlags). */
export const GYM_FLAGS = {
  suite: { type: 'string', multiple: true },
  'data-dir': { type: 'string' },
  'cache-dir': { type: 'string' },
  sandbox: { type: 'string' },
  'repos-dir': { type: 'string' },
  scoring: { type: 'string' },
  gradle: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** GYM_FLAGS and every registered backend's own flags. */
export function gymFlags(root: Composition): typeof GYM_FLAGS & Record<string, BackendFlag> {
  return { ...backendFlags(root.sandboxes), ...GYM_FLAGS };
}

export interface GymFlagValues {
  suite?: string[];
  'data-dir'?: string;
  'cache-dir'?: string;
  sandbox?: string;
  'repos-dir'?: string;
  scoring?: string;
  gradle?: string;
  /** The chosen backend's own flags (SandboxBackend.flags). */
  [backendFlag: string]: string | boolean | (string | boolean)[] | undefined;
}

/** The --help lines of gymFlags. */
export const gymFlagsUsage = (root: Composition) => `Common options:
  --suite ID[=PATH]  a suite to serve, repeatable (default examples); PATH: its dataset, or a directory suite
  --data-dir DIR     trajectories, scoring logs and sandboxes (default $BENCHGYM_HOME or ~/.cache/benchgym)
  --cache-dir DIR    built envs (venvs, the Maven repository) and the suites' own caches, each in DIR/<suite>
                     (CoderEval's projects, HumanEvo's workspaces; default $BENCHGYM_CACHE or the data dir)
  --repos-dir DIR    local git mirrors of repositories (bare or not: owner/name, owner__name, owner+name, ...) for
                     suites that check out repositories; else they are cloned from GitHub
  --scoring MODE     strict | faithful (default strict): strict turns each known scoring trick into reward 0
                     with a TAMPER_SUSPECTED note, faithful is the benchmark's own harness
                     (docs/ARCHITECTURE.md#scoring-modes)
  --gradle PATH      a Gradle used instead of projects' wrappers (a distribution directory or zip, or an
                     installed gradle; default $BENCHGYM_GRADLE); without it a wrapper whose distribution
                     cannot be reached is ENV_UNAVAILABLE
${backendUsage(root.sandboxes)}`;

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
  const backend = backendNamed(root.sandboxes, values.sandbox);
  const builder = await backend.load();
  const backendOptions = parseBackendOptions(backend, builder, values);
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
  const scoring = scoringFlag(values.scoring, 'strict');
  const dataDir = path.resolve(values['data-dir'] ?? defaultDataDir());
  const sandboxes = await builder.create(backendOptions, sandboxContext(values, dataDir, registry, 'episodes'));
  return new Gym({ registry, dataDir, cacheDir: cacheDirOf(values), scoring, sandboxes });
}

/** What a backend is built with for a gym of these flags serving `registry`. */
export function sandboxContext(
  values: { 'cache-dir'?: string; gradle?: string },
  dataDir: string,
  registry: SuiteRegistry,
  purpose: SandboxBackendContext['purpose'],
): SandboxBackendContext {
  const cacheDir = cacheDirOf(values);
  const gradle = gradleFlag(values.gradle);
  return {
    dataDir,
    ...(cacheDir ? { cacheDir: path.resolve(cacheDir) } : {}),
    ...(gradle ? { gradle } : {}),
    privatePaths: registry.privatePaths(),
    purpose,
  };
}
