/**
 * The built-in suites and agents, imported at once: for tests and benches that want them at
 * hand. The CLI uses the composition root (`bin/composition.ts`), which imports each only when a
 * command uses it; the core (src/) imports neither envs/ nor agents/.
 */
import path from 'node:path';
import { AGENTS } from '../agents/index.ts';
import { coderevalSuite } from '../envs/codereval/index.ts';
import { examplesSuite } from '../envs/examples/index.ts';
import { gitchameleonSuite } from '../envs/gitchameleon/index.ts';
import { humanevoSuite } from '../envs/humanevo/index.ts';
import { swebenchSuite } from '../envs/swebench/index.ts';
import { Gym, type GymOptions } from '../src/episode/gym.ts';
import { LocalInstanceFactory, type LocalInstanceOptions } from '../src/sandbox/local/index.ts';
import type { SandboxFactory } from '../src/sandbox/types.ts';
import { SuiteRegistry } from '../src/tasks/registry.ts';
import type { Suite } from '../src/tasks/suite.ts';

export { BUILTINS } from './composition.ts';

/**
 * The built-in suites, with the repository options of those that check out repositories
 * (`--repos-dir`); given `--cache-dir`, the suites' own caches (CoderEval's project layouts,
 * HumanEvo's workspaces, GitChameleon's docs store) go into a folder of it named after the suite.
 */
export function builtinSuites(opts: { reposDir?: string; cacheDir?: string } = {}): Suite[] {
  const repos = opts.reposDir ? { reposDir: path.resolve(opts.reposDir) } : {};
  const cache = (suite: string) => (opts.cacheDir ? { cacheDir: path.join(path.resolve(opts.cacheDir), suite) } : {});
  return [
    examplesSuite(),
    gitchameleonSuite(cache('gitchameleon')),
    coderevalSuite({ ...repos, projects: { ...repos, ...cache('codereval') } }),
    swebenchSuite(repos),
    humanevoSuite({ ...repos, ...cache('humanevo') }),
  ];
}

export const BUILTIN_SUITES: Suite[] = builtinSuites();

export { AGENTS };

/** A registry of the built-in suites serving `specs` (`examples`, `gitchameleon=PATH`, ...; default: examples, as `npm start` does). */
export function builtinRegistry(...specs: string[]): SuiteRegistry {
  const registry = new SuiteRegistry(BUILTIN_SUITES);
  for (const spec of specs.length ? specs : ['examples']) registry.enable(spec);
  return registry;
}

/** What localGym takes: a gym's options, where the sandboxes default to the local backend's with these options. */
export type LocalGymOptions = Omit<GymOptions, 'sandboxes' | 'dataDir'> & {
  dataDir: string;
  sandboxes?: SandboxFactory;
} & Pick<LocalInstanceOptions, 'isolation' | 'gradle'>;

/**
 * A gym over `sandboxes`, else over the local backend as `benchgym serve` builds it (its
 * sandboxes under the data dir, the registry's private paths hidden): for tests, benches and
 * programs that embed a gym. The registry defaults to the built-in examples.
 */
export function localGym(opts: LocalGymOptions): Gym {
  const { isolation, gradle, sandboxes, ...gymOpts } = opts;
  const registry = gymOpts.registry ?? builtinRegistry();
  const local = () =>
    new LocalInstanceFactory({
      dataDir: opts.dataDir,
      ...(gymOpts.cacheDir ? { cacheDir: gymOpts.cacheDir } : {}),
      ...(isolation ? { isolation } : {}),
      ...(gradle ? { gradle } : {}),
      privatePaths: registry.privatePaths(),
    });
  return new Gym({ ...gymOpts, registry, sandboxes: sandboxes ?? local() });
}
