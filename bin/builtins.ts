/**
 * The composition root: the one module that knows every built-in suite and agent, and hands
 * them to the CLI. The core (src/) imports neither envs/ nor agents/; a test that wants the
 * built-ins imports them from here.
 */
import path from 'node:path';
import { AGENTS } from '../agents/index.ts';
import { coderevalSuite } from '../envs/codereval/index.ts';
import { examplesSuite } from '../envs/examples/index.ts';
import { gitchameleonSuite } from '../envs/gitchameleon/index.ts';
import { humanevoSuite } from '../envs/humanevo/index.ts';
import { swebenchSuite } from '../envs/swebench/index.ts';
import type { Composition } from '../src/cli/composition.ts';
import { SuiteRegistry } from '../src/tasks/registry.ts';
import type { Suite } from '../src/tasks/suite.ts';

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

export const BUILTINS: Composition = { suites: builtinSuites, agents: AGENTS };

/** A registry of the built-in suites serving `specs` (`examples`, `gitchameleon=PATH`, ...; default: examples, as `npm start` does). */
export function builtinRegistry(...specs: string[]): SuiteRegistry {
  const registry = new SuiteRegistry(BUILTIN_SUITES);
  for (const spec of specs.length ? specs : ['examples']) registry.enable(spec);
  return registry;
}
