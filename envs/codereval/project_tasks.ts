import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { contentKey } from '../../src/env/key.ts';
import { OncePerKey, withDirLock } from '../../src/lock.ts';
import { defaultDataDir } from '../../src/project.ts';
import { GymError } from '../../src/errors.ts';
import { cachedCheckout, git, type Checkout } from '../../src/repo/index.ts';
import type { PythonEnvSpec } from '../../src/tasks/schema.ts';
import type { ProjectsTable } from './commits.ts';
import { REPOS, STANDALONE_LEVELS } from './dataset.ts';
import { HARNESS_DIR } from './tasks.ts';
import { projectEnvSpec, type ProjectEnvEntry } from './project_envs.ts';
import { functionBlock, replaceTarget, splitLayout, stubOf, targetFunction, withoutCommentLines } from './pysource.ts';
import { ownValue } from '../../src/own.ts';

/**
 * Issue 16, point 3: a task of a project level (or a standalone one whose test needs the project, `runsInProject`) as an episode inside its real project. The
 * workspace is the project at the platform's commit (`platformCommit` of projects.json, else
 * the dataset text's commit), exported into a fresh repository of one commit with the target
 * function stubbed in it: nothing of the project's history (which holds the function) is
 * there. The platform's test file goes at its own path inside the project; `scorer.py`
 * rewrites its `/home/travis/builds/repos/<owner---repo>` to the workspace when it runs.
 * The env is the project's (project-envs.json), one venv shared by its tasks; the project
 * itself is imported from the workspace (the tests put its root on `sys.path`).
 */

/** The levels that run inside their project (the others are standalone). */
export const PROJECT_LEVELS: ReadonlySet<string> = new Set(['plib_runnable', 'class_runnable', 'file_runnable', 'project_runnable']);

/**
 * Does a task run inside its project: a project level, or a standalone one (self_contained,
 * slib_runnable) whose platform test needs more than the standard library (`platformNeeds`:
 * it imports the project or a third-party module, as neo4j's `unit_of_work` test imports
 * `neo4j`), which the project's env and workspace give as the platform's copy did.
 */
export function runsInProject(level: string | undefined, needs: readonly string[]): boolean {
  if (level === undefined) return false;
  return PROJECT_LEVELS.has(level) || (STANDALONE_LEVELS.has(level) && needs.length > 0);
}

/** Bump when the layout of materialised workspaces changes: old ones are then rebuilt. */
// 2: a workspace is made only after checking that its platform test reads no file the checkout lacks.
// 3: the target is found by its path from the module (Symbol.pretty), not by its name alone.
const LAYOUT_VERSION = 3;

/** Where checkouts and workspaces are kept: hidden from sandboxes (`privatePaths`), the checkouts hold the answers. */
export function projectCacheDir(): string {
  return process.env.BENCHGYM_CODEREVAL_CACHE ?? path.join(process.env.BENCHGYM_CACHE ?? defaultDataDir(), 'codereval');
}

/** Where a task sits in its project: known from the tables, before anything is checked out. */
export interface ProjectPlacement {
  /** The GitHub repository (`owner/name`) and the commit the workspace is taken at. */
  repo: string;
  commit: string;
  date: string;
  env: PythonEnvSpec;
  /** The task's file inside the project at that commit (the platform's layout: neo4j's `src/`). */
  file: string;
  /** The platform's test file inside the project (its path under `/home/travis/builds/repos/<owner---repo>/`). */
  testPath: string;
  /** The project's root in CoderEval's image, rewritten to the workspace by the scorer. */
  rootAlias: string;
  /**
   * Where else the task's file is, in order: its own platform version's commit, then the
   * dataset text's. The workspace is taken at the first of these where the file and the
   * function are, when they are gone at `commit` (pre-commit's util.parse_version).
   */
  fallbacks?: { commit: string; date: string; file: string }[];
  /** Environment variables of the platform's image its tests read (PLATFORM_ENVIRONMENT). */
  environment?: Record<string, string>;
}

/**
 * Environment variables CoderEval's image had that a project's platform tests read, per
 * dataset project: the scorer sets them for the test's run. Each says how it is known.
 */
export const PLATFORM_ENVIRONMENT: Record<string, { vars: Record<string, string>; why: string }> = {
  'redhat-openstack/infrared': {
    vars: { JAVA_HOME: '/usr/lib/jvm/default-java' },
    why: "the get_spec_defaults test checks the spec's JAVA_HOME default against $JAVA_HOME, and its reference returns no defaults at all without one: the image the platform verified it in set JAVA_HOME (its value is not compared with anything else)",
  },
};

/** Why a task of a project level cannot run in its project here, or where it sits. */
export type ProjectPlan = { placement: ProjectPlacement } | { unavailable: string };

/**
 * Places a task in its project from projects.json and project-envs.json, or says why it
 * cannot be (no commit found, no env derived, the env derived at another commit).
 */
export function planProjectTask(
  t: { id: string; project: string; lspPath: string; testKey: string },
  projects: ProjectsTable | undefined,
  envs: Map<string, ProjectEnvEntry>,
): ProjectPlan {
  const state = ownValue(projects?.projects, t.project);
  const match = ownValue(projects?.tasks, t.id);
  if (!projects) return { unavailable: 'no projects table (envs/codereval/projects.json)' };
  if (!state || !match) {
    const why = ownValue(projects.notFound, t.id)?.reason;
    return { unavailable: `the project state of ${t.project} is not known${why ? `: ${why}` : ''} (benchgym codereval-commits)` };
  }
  const commit = state.platformCommit ?? state.commit;
  const date = state.platformDate ?? state.date;
  const entry = envs.get(t.project);
  if (!entry)
    return {
      unavailable: `no env derived for ${t.project} at ${commit.slice(0, 12)} (benchgym codereval-envs; see envs/codereval/README.md)`,
    };
  if (entry.commit !== commit)
    return {
      unavailable: `the env of ${t.project} was derived at ${entry.commit.slice(0, 12)}, not at the workspace's commit ${commit.slice(0, 12)}`,
    };
  const root = `${REPOS}/${t.project.replace('/', '---')}`;
  const file = (state.platformCommit ? match.platform?.path : undefined) ?? match.layout?.path ?? match.path ?? t.lspPath;
  const env = projectEnvSpec(entry);
  // Most tests sit inside the platform's copy of the project; plib_runnable ones are often standalone files (public libraries only).
  const testPath = t.testKey.startsWith(`${REPOS}/standalone/`)
    ? `${HARNESS_DIR}/${t.testKey.slice(t.testKey.lastIndexOf('/') + 1)}`
    : t.testKey.startsWith(root + '/')
      ? t.testKey.slice(root.length + 1)
      : undefined;
  if (!testPath) return { unavailable: `its platform test file ${t.testKey} is neither inside ${root} nor standalone` };
  const others = [
    ...(match.platform ? [{ commit: match.platform.commit, date: match.platform.date, file: match.platform.path }] : []),
    { commit: match.commit, date: match.date, file: match.path ?? t.lspPath },
  ].filter((o, i, all) => o.commit !== commit && all.findIndex((x) => x.commit === o.commit) === i);
  const fallback = others.length ? { fallbacks: others } : {};
  const vars = ownValue(PLATFORM_ENVIRONMENT, t.project)?.vars;
  return {
    placement: {
      repo: state.repo,
      commit,
      date,
      env,
      file,
      testPath,
      rootAlias: root,
      ...fallback,
      ...(vars ? { environment: vars } : {}),
    },
  };
}

/** The task's file as the project holds it, with the target stubbed (or, for the reference, the platform's version in place). */
export interface ProjectFiles {
  stub: string;
  gold: string;
  /** The stub's block (from `def`), to mask the function in a visible copy of the test. */
  stubBlock: string[];
}

/**
 * The stub and the reference in the project's own file: the function the file has at the
 * commit reduced to its signature and docstring (`docstring` replaces it when given,
 * `fallback` fills it when there is none), and the platform test's version of the function.
 */
export function projectFiles(
  fileText: string,
  target: string,
  platformTest: string,
  docstring?: string,
  fallback?: string,
): ProjectFiles | string {
  const span = targetFunction(fileText, target);
  if (!span) return `no function ${target} in the file at the commit`;
  const lines = fileText.split('\n');
  const prefix = lines[span.def]!.slice(0, span.column);
  // CoderEval's layout: the first line unindented, the others at their column.
  const code = [lines[span.start]!.slice(span.column), ...lines.slice(span.start + 1, span.end)].join('\n');
  const stubBlock = splitLayout(stubOf(code, docstring, fallback), prefix).block;
  const stub = replaceTarget(fileText, target, stubBlock)!;
  const platform = functionBlock(platformTest, target);
  if (!platform) return `no function ${target} in its platform test file`;
  return { stub, gold: replaceTarget(fileText, target, platform)!, stubBlock };
}

export interface ProjectSourceOptions {
  /** Local mirrors (`--repos-dir`); GitHub otherwise, unless `allowNetwork` is false. */
  reposDir?: string;
  allowNetwork?: boolean;
  cacheDir?: string;
}

const onceWorkspace = new OncePerKey<ProjectFiles>();

/** The project's checkout at the commit (cached, no future), from a mirror or GitHub. */
export function projectCheckout(p: Pick<ProjectPlacement, 'repo' | 'commit'>, opts: ProjectSourceOptions): Promise<Checkout> {
  // Once per process and project, failures too: a project that cannot be had is tried once, not once per task.
  const key = JSON.stringify([opts.cacheDir ?? projectCacheDir(), opts.reposDir ?? null, p.repo, p.commit]);
  let c = checkouts.get(key);
  if (!c) {
    c = cachedCheckout({
      cacheDir: opts.cacheDir ?? projectCacheDir(),
      repo: p.repo,
      commit: p.commit,
      reposDir: opts.reposDir,
      allowNetwork: opts.allowNetwork ?? true,
    });
    checkouts.set(key, c);
  }
  return c;
}
const checkouts = new Map<string, Promise<Checkout>>();

/** The file at the commit in a checkout, or undefined. */
export async function fileInCheckout(checkout: Checkout, file: string): Promise<string | undefined> {
  const abs = path.resolve(checkout.dir, file);
  if (!abs.startsWith(checkout.dir + path.sep)) return undefined;
  return fs.readFile(abs, 'utf8').catch(() => undefined);
}

/**
 * The files of `missing` (absent from the checkout: its source lacked them) that a platform
 * test reads: named by their path, or through their folder named as a whole (a folder given to
 * the function, not a path inside it).
 */
export function missingFilesRead(platformTest: string, missing: string[]): string[] {
  if (!missing.length) return [];
  const code = withoutCommentLines(platformTest);
  const names = (p: string) => new RegExp(`${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w./-])`);
  const folders = [...new Set(missing.map((f) => path.posix.dirname(f)).filter((d) => d !== '.'))].filter((d) => names(d).test(code));
  return missing.filter((f) => names(f).test(code) || folders.includes(path.posix.dirname(f)));
}

/** What a task's start state is made from: its key is the cache's. */
export interface StartInputs {
  label: string;
  placement: ProjectPlacement;
  /** The target function: its dotted path from the module (see targetPath). */
  target: string;
  platformTest: string;
  docstring?: string;
  fallback?: string;
}

/**
 * The start state of a task (made once, cached under `<cache>/workspaces`): the checkout's
 * tree copied without its `.git`, the task's file stubbed, and a new repository holding it as
 * its one commit (branch `main`, no remote). Returns the directory (sandboxes copy it) and the
 * file's versions; a cached one is returned without touching the project. Errors:
 * ENV_UNAVAILABLE when the project or the function is not to be had.
 */
export async function projectStartState(
  input: StartInputs,
  opts: ProjectSourceOptions,
): Promise<{ dir: string; files: ProjectFiles; commit: string; file: string }> {
  const first = input.placement;
  let firstError: unknown;
  for (const at of [first, ...(first.fallbacks ?? []).map((f) => ({ ...first, ...f }))]) {
    try {
      return { ...(await startStateAt(input, at, opts)), commit: at.commit, file: at.file };
    } catch (err) {
      firstError ??= err;
      // Only a file or function missing at that commit moves on to the next.
      if ((err as GymError).code !== 'ENV_UNAVAILABLE' || !/is not in|no function/.test((err as Error).message)) throw err;
    }
  }
  throw firstError;
}

async function startStateAt(
  input: StartInputs,
  p: ProjectPlacement,
  opts: ProjectSourceOptions,
): Promise<{ dir: string; files: ProjectFiles }> {
  const key = contentKey([
    LAYOUT_VERSION,
    p.repo,
    p.commit,
    p.file,
    input.target,
    input.platformTest,
    input.docstring ?? null,
    input.fallback ?? null,
  ]);
  const dir = path.join(opts.cacheDir ?? projectCacheDir(), 'workspaces', `${input.label.replace(/[^\w.-]+/g, '_')}-${key}`);
  const record = `${dir}.json`;
  const cached = async () =>
    existsSync(record) && existsSync(dir) ? (JSON.parse(await fs.readFile(record, 'utf8')) as ProjectFiles) : undefined;
  const hit = await cached();
  if (hit) return { dir, files: hit };
  const files = await onceWorkspace.run(dir, () =>
    withDirLock(`${dir}.lock`, async () => {
      const again = await cached();
      if (again) return again;
      const checkout = await projectCheckout(p, opts);
      const lacking = missingFilesRead(input.platformTest, checkout.missing ?? []);
      if (lacking.length)
        throw new GymError(
          'ENV_UNAVAILABLE',
          `its platform test reads ${lacking.join(', ')} of ${p.repo}, whose contents the project's source (${opts.reposDir ? 'the local mirror' : 'the clone'}) lacks; a complete clone from GitHub has them`,
          { missing: lacking },
        );
      const text = await fileInCheckout(checkout, p.file);
      if (text === undefined) throw new GymError('ENV_UNAVAILABLE', `${p.file} is not in ${p.repo} at ${p.commit.slice(0, 12)}`);
      const made = projectFiles(text, input.target, input.platformTest, input.docstring, input.fallback);
      if (typeof made === 'string') throw new GymError('ENV_UNAVAILABLE', `${p.file} of ${p.repo} at ${p.commit.slice(0, 12)}: ${made}`);
      await fs.rm(dir, { recursive: true, force: true });
      try {
        await fs.cp(checkout.dir, dir, {
          recursive: true,
          filter: (src) => path.relative(checkout.dir, src).split(path.sep)[0] !== '.git',
        });
        await fs.writeFile(path.join(dir, p.file), made.stub);
        const env = { GIT_AUTHOR_DATE: p.date, GIT_COMMITTER_DATE: p.date };
        const g = (args: string[]) =>
          git(['-c', 'user.name=benchgym', '-c', 'user.email=benchgym@localhost', '-c', 'commit.gpgsign=false', ...args], {
            cwd: dir,
            env,
          });
        await g(['init', '-q', '-b', 'main']);
        await g(['add', '-A', '-f', '.']);
        await g(['commit', '-q', '--no-verify', '-m', `${p.repo} at ${p.commit.slice(0, 12)} (history cut), the task's function stubbed`]);
        await fs.writeFile(record, JSON.stringify(made));
        return made;
      } catch (err) {
        await fs.rm(dir, { recursive: true, force: true });
        throw err;
      }
    }),
  );
  return { dir, files };
}
