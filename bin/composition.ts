/**
 * The composition root: the one module that knows every built-in suite, agent and sandbox
 * backend, and hands them to the CLI. Each is declared here by name and summary and imported
 * only when a command uses it, so `benchgym --version` and `--help` load none of them. The core
 * (src/) imports neither envs/ nor agents/.
 */
import path from 'node:path';
import type { AgentTable, Composition, SuiteEntry, SuiteLoadOptions } from '../src/cli/composition.ts';
import { BUILTIN_SANDBOXES } from './sandboxes.ts';

const repoOptions = (opts: SuiteLoadOptions = {}) => (opts.reposDir ? { reposDir: path.resolve(opts.reposDir) } : {});
/** Given `--cache-dir`, a suite's own caches go into a folder of it named after the suite. */
const cacheOptions = (opts: SuiteLoadOptions, suite: string) =>
  opts.cacheDir ? { cacheDir: path.join(path.resolve(opts.cacheDir), suite) } : {};

/** The built-in suites, in `--suite`'s default order (the first is served when none is named). */
export const BUILTIN_SUITE_ENTRIES: readonly SuiteEntry[] = [
  {
    id: 'examples',
    summary: "benchgym's own small example suite (Python functions, a pinned package, a repo fix, Maven)",
    commands: [],
    load: async () => (await import('../envs/examples/index.ts')).examplesSuite(),
  },
  {
    id: 'gitchameleon',
    summary:
      'GitChameleon: Python problems that must be solved for one pinned library version (v2: 328 problems, hidden pytest files; v1: 116, assertion scripts)',
    commands: [],
    load: async (opts = {}) => (await import('../envs/gitchameleon/index.ts')).gitchameleonSuite(cacheOptions(opts, 'gitchameleon')),
  },
  {
    id: 'codereval',
    summary:
      "CoderEval (Python): 230 functions inside 43 real projects, graded by the platform's tests; six runnable levels (standalone ones run here, the others need CoderEval's Docker image)",
    commands: [
      { name: 'codereval-commits', summary: "find each CoderEval task's commit in its project's history, by content" },
      { name: 'codereval-envs', summary: "derive and build each CoderEval project's env at its commit, constrained to its era" },
    ],
    load: async (opts = {}) =>
      (await import('../envs/codereval/index.ts')).coderevalSuite({
        ...repoOptions(opts),
        projects: { ...repoOptions(opts), ...cacheOptions(opts, 'codereval') },
      }),
  },
  {
    id: 'swe-bench-java',
    summary: 'SWE-bench-java / Multi-SWE-bench: resolve a GitHub issue in a real repository; scored by FAIL_TO_PASS and PASS_TO_PASS tests',
    commands: [
      {
        name: 'swebench-reconstruct',
        summary: 'rebuild SWE-bench instances (patch, test patch, FAIL_TO_PASS, PASS_TO_PASS) from a repository history',
      },
    ],
    load: async (opts) => (await import('../envs/swebench/index.ts')).swebenchSuite(repoOptions(opts)),
  },
  {
    id: 'humanevo',
    summary:
      'HumanEvo: functions mined from git histories, each seen as the developer saw the repository (aware) or at its newest version (ignored)',
    commands: [{ name: 'build-tasks', summary: 'mine HumanEvo tasks from a git history, validated by execution' }],
    load: async (opts = {}) =>
      (await import('../envs/humanevo/index.ts')).humanevoSuite({ ...repoOptions(opts), ...cacheOptions(opts, 'humanevo') }),
  },
];

/** The built-in agents (the `openai` client they share loads with them). */
export const BUILTIN_AGENTS: AgentTable = {
  names: ['swe-agent', 'feedback', 'single-shot', 'replay'],
  load: async () => (await import('../agents/index.ts')).AGENTS,
};

/** The built-in sandbox backends (bin/sandboxes.ts): each imported only when `--sandbox` names it. */
export { BUILTIN_SANDBOXES };

export const BUILTINS: Composition = { suites: BUILTIN_SUITE_ENTRIES, agents: BUILTIN_AGENTS, sandboxes: BUILTIN_SANDBOXES };
