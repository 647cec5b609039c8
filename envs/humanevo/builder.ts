import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sandboxEnv } from '../../src/env/types.ts';
import type { PreparedEnv } from '../../src/env/types.ts';
import { GymError } from '../../src/errors.ts';
import { runTests } from '../../src/scoring/runners.ts';
import type { SandboxFactory } from '../../src/sandbox/types.ts';
import { TaskSchema, type EnvSpec, type RunnerSpec, type Task } from '../../src/tasks/schema.ts';
import {
  briefOf,
  isSourcePath,
  isTestPath,
  listFunctions,
  projectNames,
  stubFunction,
  type Language,
  type SourceFunction,
} from './functions.ts';
import {
  changedFiles,
  exportTree,
  fileAt,
  filesAt,
  gitIn,
  isUnexportable,
  listChanges,
  overlay,
  resolveRev,
  type Change,
} from './history.ts';
import { EraEnvResolver, type EraEnvDerivation, type EraEnvOptions } from './era_env.ts';
import { javaEraOf } from './java_era.ts';
import { BUILT_FORMAT, BuiltTaskRecord } from './record.ts';
import { ownValue } from '../../src/own.ts';

/** Why a change or a candidate function did not become a task. */
export type RejectReason =
  | 'no-test-change'
  | 'no-added-function'
  | 'parse-error'
  | 'constructor'
  | 'trivial-body'
  | 'no-docstring'
  /** Java: the method shares its name with another of its class (an overload): the task's target would not be one method. */
  | 'overloaded'
  | 'no-test-results'
  | 'breaks-passing-tests'
  | 'change-tests-fail'
  | 'no-fail-to-pass'
  /** The env of the change's era cannot be had on this machine (no fitting Python, an unresolvable or unbuildable requirement). */
  | 'env-unavailable'
  /** The change's tree (or its parent's) cannot be read whole from the local copy: a blob or a tree it lacks. */
  | 'unexportable'
  /**
   * Its tests could not be run (the sandbox or the runner failed, not a test): not journaled, so a
   * resumed build (`--resume`) tries the change again.
   */
  | 'run-failed';

export const CHANGE_REASONS: RejectReason[] = ['no-test-change', 'no-added-function', 'parse-error'];

export interface Rejection {
  commit: string;
  reason: RejectReason;
  function?: string;
  file?: string;
  detail?: string;
}

export interface BuildOptions {
  /** The repository (bare or a work tree). */
  repo: string;
  language: Language;
  /** Exclusive start of the walk (default: the first commit). */
  from?: string;
  /** Last commit walked (default HEAD); also the evolving-ignored context. */
  to?: string;
  /** Stop after this many validated tasks. */
  limit?: number;
  /** Display name of the repository (default: the folder's name). */
  repoName?: string;
  /** The environment tests run in (Python: version and requirements; Java: JDK and Maven); with eraEnv, the Python one is only the kind. */
  env: EnvSpec;
  /**
   * Python: each change gets the env of its era (the Python its files declare, its
   * dependencies and test runner as PyPI held them at its date; `era_env.ts`) instead of
   * `env`. A change whose era env cannot be had is rejected as `env-unavailable`.
   */
  eraEnv?: EraEnvOptions;
  /** How the project's tests are run (default: pytest / maven over the whole suite). */
  runner?: RunnerSpec;
  /**
   * Which tests each change is validated (and its task scored) with: `suite` (default) the
   * project's whole suite, so pass-to-pass guards everything; `change` only the test files the
   * change adds or edits (paper §3.2.4 runs the PR's tests): a Java change then costs one test
   * class, not a whole Surefire run, and its task is scored with the same selection.
   */
  testScope?: 'suite' | 'change';
  testTimeoutMs?: number;
  sandboxes: SandboxFactory;
  /** Where the validation trees are laid out (default: a temporary folder, removed at the end). */
  workDir?: string;
  /** Called with each validated task, as it is found. */
  onTask?: (record: BuiltTaskRecord) => void | Promise<void>;
  onReject?: (r: Rejection) => void;
  /** Called when a change has been walked (its tasks already given to onTask): what a resumed build skips. */
  onChange?: (outcome: ChangeOutcome) => void | Promise<void>;
  /** Changes an earlier run of the same build walked (by commit): counted from their outcome, not walked again. */
  done?: Map<string, ChangeOutcome>;
  progress?: (message: string) => void;
  signal?: AbortSignal;
}

/** What walking one change gave: the journal line of a resumable build. */
export interface ChangeOutcome {
  commit: string;
  rejections: Rejection[];
  /** Instance ids of the tasks it gave. */
  tasks: string[];
  candidates: number;
  testRuns: number;
  /** Time spent walking it (its test runs, env builds included); absent in journals of older builds. */
  durationMs?: number;
}

export interface BuildReport {
  repo: string;
  language: Language;
  latestCommit: string;
  /** Changes in the range, and how many were walked before --limit stopped the walk. */
  changes: number;
  walked: number;
  /** Of the walked changes, those taken from an earlier run's journal (resume). */
  resumed: number;
  candidates: number;
  validated: number;
  rejected: Partial<Record<RejectReason, number>>;
  rejections: Rejection[];
  testRuns: number;
  /** The distinct envs the changes were tested in: Python (or JDK), what chose it, and the tasks each gave. */
  envs: EnvUse[];
  /** This run's wall time. */
  durationMs: number;
  /** Time spent walking the changes, over this run and the resumed runs whose journals say (the build's cost). */
  walkMs: number;
  stoppedAtLimit: boolean;
}

export interface EnvUse {
  key: string;
  python?: string;
  from?: string;
  cutoff?: string | null;
  /** Changes tested in it, and the tasks they gave. */
  changes: number;
  tasks: number;
}

/** The env a change is tested in: the spec, how it was derived (era envs), and the built env. */
interface ChangeEnv {
  spec: EnvSpec;
  derivation?: EraEnvDerivation;
  /** Java: what the compile level was taken from (`java_era.ts`). */
  javaFrom?: string;
  prepared: PreparedEnv;
}

export interface Candidate {
  file: string;
  fn: SourceFunction;
  source: string;
  /** Another function of the file has the same qualified name (a Java overload). */
  overloaded?: boolean;
}

type TestStatus = Map<string, 'passed' | 'failed' | 'error' | 'skipped'>;

/** What a run reported nothing for: the command and the end of its output (for the rejection's detail). */
const silentRuns = new WeakMap<TestStatus, string>();

export function defaultRunner(language: Language, testArgs: string[] = []): RunnerSpec {
  return language === 'python' ? { type: 'pytest', args: [...PYTEST_ARGS, ...testArgs] } : { type: 'maven', tests: testArgs, args: [] };
}

/**
 * pytest's arguments in every HumanEvo run: a module that fails to collect on the era's Python
 * (pydash's 2014 `tests/fixtures.py`, whose `__getattr__` raises KeyError when Python 3.4+'s
 * doctest unwrapping probes it under `--doctest-modules`) costs that module's tests, not the
 * whole session's; its tests are missing, so they count as failing.
 */
export const PYTEST_ARGS = ['--continue-on-collection-errors'];

/**
 * The JUnit class a Java test file holds, as test ids name it: `src/test/java/a/B.java` → `a.B`,
 * and outside the root module `core/src/test/java/a/B.java` → `core:a.B` (the Surefire reports' form).
 */
function javaTestClass(file: string): string {
  const m = /^(?:(.+)\/)?src\/test\/java\/(.+)\.java$/.exec(file);
  if (!m)
    return file
      .replace(/\.java$/, '')
      .split('/')
      .join('.');
  return `${m[1] ? `${m[1]}:` : ''}${m[2]!.split('/').join('.')}`;
}

/**
 * The runner limited to a change's test files: pytest gets them as arguments; Maven gets their
 * classes (`module:pkg.Class`, so a multi-module build runs `-pl module -am`).
 */
export function scopedRunner(language: Language, runner: RunnerSpec, testFiles: string[]): RunnerSpec {
  const sources = testFiles.filter((f) => isSourcePath(language, f));
  if (runner.type === 'pytest') return { ...runner, args: [...runner.args.filter((a) => a.startsWith('-')), ...sources] };
  if (runner.type === 'maven') {
    return { ...runner, tests: sources.map(javaTestClass) };
  }
  return runner;
}

/**
 * A Java era's `-D` overrides (`java_era.ts`) on the test runs too, not only the env's build:
 * each run compiles the tree again, and the task's runner carries them to scoring.
 */
export function withEraArgs(runner: RunnerSpec, env: EnvSpec): RunnerSpec {
  if (runner.type !== 'maven' || env.kind !== 'java' || !env.args.length) return runner;
  return { ...runner, args: [...runner.args, ...env.args.filter((a) => !runner.args.includes(a))] };
}

/**
 * pytest collecting what nose did: nose took any module whose name has `test` after a start,
 * `_`, `-` or `.` (arrow's 2013 `tests/arrow_tests.py`), pytest only `test_*.py` and
 * `*_test.py`: a nose-era change's tests would not run at all.
 */
export function noseRunner(runner: RunnerSpec): RunnerSpec {
  if (runner.type !== 'pytest' || runner.args.some((a) => a.startsWith('python_files='))) return runner;
  return { ...runner, args: [...runner.args, '-o', 'python_files=test*.py *_test*.py *-test*.py'] };
}

/** Does a test id belong to one of these test files? */
export function testInFiles(language: Language, id: string, files: string[]): boolean {
  if (language === 'python') return files.some((f) => id === f || id.startsWith(`${f}::`));
  const cls = id.split('#')[0]!;
  return files.some((f) => {
    const c = javaTestClass(f);
    return cls === c || cls.startsWith(`${c}$`);
  });
}

/** A repository's name from its folder (`x/toolz`, `x/toolz.git`, a fetched `x/toolz/repo`: `toolz`). */
export function repoFolderName(repo: string): string {
  return path.basename(
    path
      .resolve(repo)
      .replace(/\/(repo|\.git)\/?$/, '')
      .replace(/\.git$/, ''),
  );
}

function slug(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
}

/**
 * Mines HumanEvo-style tasks from a repository's history (paper §3.2): each change that adds
 * a function or method and adds or changes tests gives candidates (constructors,
 * initialisers and trivial bodies left out), and each candidate is kept only if execution
 * agrees: with the function stubbed at least one of the change's tests fails, with the
 * original body those tests pass, and no test that passed before the change breaks.
 */
export async function buildTasks(opts: BuildOptions): Promise<BuildReport> {
  const started = Date.now();
  const repo = path.resolve(opts.repo);
  const lang = opts.language;
  const runner = opts.runner ?? defaultRunner(lang);
  const latest = await resolveRev(repo, opts.to ?? 'HEAD');
  const changes = await listChanges(repo, { from: opts.from, to: latest });
  const repoName = opts.repoName ?? repoFolderName(repo);
  const report: BuildReport = {
    repo: repoName,
    language: lang,
    latestCommit: latest,
    changes: changes.length,
    walked: 0,
    resumed: 0,
    candidates: 0,
    validated: 0,
    rejected: Object.create(null) as BuildReport['rejected'],
    rejections: [],
    testRuns: 0,
    envs: [],
    durationMs: 0,
    walkMs: 0,
    stoppedAtLimit: false,
  };
  const reject = (r: Rejection) => {
    report.rejected[r.reason] = (report.rejected[r.reason] ?? 0) + 1;
    report.rejections.push(r);
    opts.onReject?.(r);
  };
  const ownWorkDir = !opts.workDir;
  const workDir = opts.workDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-build-')));
  const runs = new Map<string, TestStatus>();
  const envOf = changeEnvs(opts, repo, workDir);
  const envUse = (env: ChangeEnv): EnvUse => {
    let use = report.envs.find((e) => e.key === env.prepared.key);
    if (!use) {
      use = {
        key: env.prepared.key,
        ...(env.derivation
          ? { python: env.derivation.python, from: env.derivation.python_from, cutoff: env.derivation.cutoff }
          : env.spec.kind === 'python'
            ? { python: env.spec.version }
            : env.javaFrom
              ? { from: env.javaFrom }
              : {}),
        changes: 0,
        tasks: 0,
      };
      report.envs.push(use);
    }
    return use;
  };
  try {
    let current: ChangeOutcome | undefined;
    const rejectHere = (r: Rejection) => {
      current?.rejections.push(r);
      reject(r);
    };
    const walk = async (change: Change, index: number): Promise<void> => {
      const reject = rejectHere;
      opts.progress?.(
        `[${index + 1}/${changes.length}] ${change.commit.slice(0, 10)} ${change.subject.slice(0, 70)}${etaNote(walkedHere, Date.now() - walkStarted, changes.length - index)}`,
      );
      const files = await changedFiles(repo, change.parent, change.commit);
      // The change's test edits (data files under a test folder included) become the hidden tests.
      const tests = files.filter((f) => f.status !== 'D' && isTestPath(lang, f.path)).map((f) => f.path);
      const sources = files.filter((f) => f.status !== 'D' && isSourcePath(lang, f.path) && !isTestPath(lang, f.path));
      if (!tests.some((t) => isSourcePath(lang, t))) return reject({ commit: change.commit, reason: 'no-test-change' });
      const candidates = await addedFunctions(
        repo,
        lang,
        change,
        sources.map((s) => s.path),
        reject,
      );
      if (!candidates.length) return reject({ commit: change.commit, reason: 'no-added-function' });
      const viable: Candidate[] = [];
      for (const c of candidates) {
        report.candidates++;
        current!.candidates++;
        const base = { commit: change.commit, function: c.fn.qualname, file: c.file };
        if (c.fn.isConstructor) reject({ ...base, reason: 'constructor' });
        else if (c.fn.trivial) reject({ ...base, reason: 'trivial-body' });
        else if (!c.fn.docstring?.trim()) reject({ ...base, reason: 'no-docstring' });
        else if (c.overloaded) reject({ ...base, reason: 'overloaded' });
        else viable.push(c);
      }
      if (!viable.length) return;
      const env = await envOf(change, tests);
      if ('unavailable' in env) {
        for (const c of viable)
          reject({ commit: change.commit, function: c.fn.qualname, file: c.file, reason: 'env-unavailable', detail: env.unavailable });
        return;
      }
      const use = envUse(env);
      use.changes++;
      const eraRunner = withEraArgs(env.derivation?.runner === 'nose' ? noseRunner(runner) : runner, env.spec);
      const validated = await validateChange(opts, {
        repo,
        change,
        files,
        tests,
        viable,
        workDir,
        env: env.prepared,
        runner: opts.testScope === 'change' ? scopedRunner(lang, eraRunner, tests) : eraRunner,
        reject,
        report,
        runs,
      });
      for (const record of validated) {
        if (opts.limit !== undefined && report.validated >= opts.limit) break;
        const parsed = BuiltTaskRecord.parse({
          ...record,
          env: env.spec,
          ...(env.derivation ? { env_derivation: env.derivation } : {}),
          repo: repoName,
          repo_path: repo,
          latest_commit: latest,
        });
        report.validated++;
        use.tasks++;
        current!.tasks.push(parsed.instance_id);
        await opts.onTask?.(parsed);
      }
    };
    // The ETA is from the changes walked in this run (resumed ones cost nothing).
    let walkedHere = 0;
    const walkStarted = Date.now();
    for (const [index, change] of changes.entries()) {
      if (opts.signal?.aborted) throw new GymError('CANCELLED', 'build-tasks was cancelled');
      if (opts.limit !== undefined && report.validated >= opts.limit) {
        report.stoppedAtLimit = true;
        break;
      }
      report.walked++;
      const prior = opts.done?.get(change.commit);
      if (prior) {
        // Walked by an earlier run of this build: its outcome counts, nothing is run again.
        report.resumed++;
        report.walkMs += prior.durationMs ?? 0;
        report.candidates += prior.candidates;
        report.validated += prior.tasks.length;
        for (const r of prior.rejections) {
          report.rejected[r.reason] = (report.rejected[r.reason] ?? 0) + 1;
          report.rejections.push(r);
        }
        continue;
      }
      const runsBefore = report.testRuns;
      const changeStarted = Date.now();
      current = { commit: change.commit, rejections: [], tasks: [], candidates: 0, testRuns: 0 };
      // One change that cannot be exported or run is that change's rejection: the walk goes on.
      const failed = await walk(change, index).then(
        () => undefined,
        (err: unknown) => changeFailure(err, change),
      );
      if (failed) rejectHere(failed);
      walkedHere++;
      current.testRuns = report.testRuns - runsBefore;
      current.durationMs = Date.now() - changeStarted;
      report.walkMs += current.durationMs;
      if (failed?.reason !== 'run-failed') await opts.onChange?.(current);
      current = undefined;
    }
  } finally {
    if (ownWorkDir) await fs.rm(workDir, { recursive: true, force: true }).catch(() => {});
  }
  report.durationMs = Date.now() - started;
  return report;
}

/**
 * A change's walk that threw: a rejection when the change itself cannot be exported (a blob the
 * local copy lacks) or its tests cannot be run; anything else (a cancel, the package index out of
 * reach, a fault of the builder) is rethrown and ends the build.
 */
export function changeFailure(err: unknown, change: Pick<Change, 'commit'>): Rejection {
  if (isUnexportable(err)) return { commit: change.commit, reason: 'unexportable', detail: err.message.slice(0, 800) };
  if (!(err instanceof GymError) || err.code === 'CANCELLED' || /could not reach the package index/.test(err.message)) throw err;
  return { commit: change.commit, reason: 'run-failed', detail: `${err.code}: ${err.message.split('\n')[0]!.slice(0, 800)}` };
}

/**
 * The progress line's pace and ETA: the mean time of the `walked` changes of this run times the
 * `remaining` ones (this one included); empty before the first change is walked.
 */
export function etaNote(walked: number, elapsedMs: number, remaining: number): string {
  if (walked <= 0 || remaining <= 0) return '';
  const per = elapsedMs / walked;
  const human = (ms: number) => {
    const s = Math.round(ms / 1000);
    if (s < 60) return `${s} s`;
    const m = Math.round(s / 60);
    return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
  };
  return ` (${human(per)}/change, ETA ${human(per * remaining)})`;
}

/** Functions that exist after the change and not before it, in the change's source files. */
export async function addedFunctions(
  repo: string,
  lang: Language,
  change: Change,
  sources: string[],
  reject: (r: Rejection) => void,
): Promise<Candidate[]> {
  if (!sources.length) return [];
  const after: Record<string, string> = {};
  const before: Record<string, string> = {};
  for (const f of sources) {
    after[f] = (await fileAt(repo, change.commit, f)) ?? '';
    const old = await fileAt(repo, change.parent, f);
    if (old !== undefined) before[f] = old;
  }
  const tree = await filesAt(repo, change.commit);
  const project = projectNames(lang, tree, (p) => ownValue(after, p));
  if (lang === 'java') {
    // Type names from the whole tree, read only when not already at hand.
    for (const p of tree)
      if (p.endsWith('.java') && !isTestPath(lang, p))
        project.classes.push(
          p
            .split('/')
            .pop()!
            .replace(/\.java$/, ''),
        );
  }
  const [newFns, oldFns] = await Promise.all([listFunctions(lang, after, project), listFunctions(lang, before, project)]);
  const out: Candidate[] = [];
  for (const f of sources) {
    const now = newFns.get(f);
    if (typeof now === 'string') {
      reject({ commit: change.commit, reason: 'parse-error', file: f, detail: now });
      continue;
    }
    const was = oldFns.get(f);
    const known = new Set(Array.isArray(was) ? was.map((fn) => fn.qualname) : []);
    const named = new Map<string, number>();
    for (const fn of now ?? []) named.set(fn.qualname, (named.get(fn.qualname) ?? 0) + 1);
    for (const fn of now ?? [])
      if (!known.has(fn.qualname))
        out.push({ file: f, fn, source: after[f]!, ...(named.get(fn.qualname)! > 1 ? { overloaded: true } : {}) });
  }
  return out;
}

/**
 * The env of each change. Fixed (`opts.env`): prepared once, from the first candidate's
 * tree, and a failure ends the build. Era (`opts.eraEnv`, Python): derived per change,
 * built once per distinct spec (the env builder keys by content), and an env that cannot
 * be had (derivation or build) makes the change's candidates `env-unavailable`.
 */
function changeEnvs(
  opts: BuildOptions,
  repo: string,
  workDir: string,
): (change: Change, testFiles: string[]) => Promise<ChangeEnv | { unavailable: string }> {
  if (opts.language === 'java' && opts.env.kind === 'java') return javaEnvs(opts, opts.env, repo, workDir);
  if (!opts.eraEnv || opts.language !== 'python') {
    let fixed: Promise<ChangeEnv> | undefined;
    return (change) => {
      fixed ??= prepareEnv(opts, opts.env, repo, change.commit, workDir).then((prepared) => ({ spec: opts.env, prepared }));
      return forgetUnexportable(fixed, () => (fixed = undefined));
    };
  }
  const resolver = new EraEnvResolver(repo, { progress: opts.progress, ...opts.eraEnv });
  const built = new Map<string, Promise<ChangeEnv | { unavailable: string }>>();
  return async (change) => {
    const era = await resolver.envFor(change.commit, change.date);
    if ('unavailable' in era) return era;
    const key = JSON.stringify(era.spec);
    let env = built.get(key);
    if (!env) {
      env = buildDropping(opts, era.spec, era.derivation, repo, change.commit, workDir);
      built.set(key, env);
    }
    return forgetUnexportable(env, () => built.delete(key));
  };
}

/**
 * An env prepared from a change's tree that could not be exported says nothing of the env: it
 * is forgotten (the next change with the same env tries again from its own tree), and the error
 * rejects this change only.
 */
function forgetUnexportable<T>(env: Promise<T>, forget: () => void): Promise<T> {
  return env.catch((err: unknown) => {
    if (isUnexportable(err)) forget();
    throw err;
  });
}

/** pip's own words when a pinned release has no file for the env's Python (`src/env/python.ts`). */
const NO_DISTRIBUTION = /no distribution of ([A-Za-z0-9_.-]+)==\S+ for this Python/;

/**
 * Builds a Python era env; a pinned release with no file for the env's Python (glom's 2018
 * `futures==3.2.0`, a Python 2 backport uv kept because the pin is exact) is left out and named
 * in the derivation, and the env built again without it (a few times at most).
 */
async function buildDropping(
  opts: BuildOptions,
  spec: EnvSpec,
  derivation: EraEnvDerivation,
  repo: string,
  commit: string,
  workDir: string,
): Promise<ChangeEnv | { unavailable: string }> {
  const what = `Python ${spec.kind === 'python' ? spec.version : ''} env (${derivation.python_from})`;
  const dropped = [...(derivation.dropped ?? [])];
  let current = spec;
  for (let attempt = 0; ; attempt++) {
    try {
      const prepared = await prepareEnv(opts, current, repo, commit, workDir);
      return { spec: current, derivation: { ...derivation, ...(dropped.length ? { dropped } : {}) }, prepared };
    } catch (err) {
      const reason = err instanceof GymError ? (typeof err.details?.reason === 'string' ? err.details.reason : err.message) : '';
      const name = NO_DISTRIBUTION.exec(reason)?.[1]
        ?.toLowerCase()
        .replace(/[-_.]+/g, '-');
      const norm = (r: string) =>
        r
          .split(/[=<>!~ ;[]/)[0]!
          .toLowerCase()
          .replace(/[-_.]+/g, '-');
      const gone = current.kind === 'python' && name ? current.requirements.find((r) => norm(r) === name) : undefined;
      if (!gone || current.kind !== 'python' || attempt >= 4) return unavailableEnv(err, what);
      opts.progress?.(`  era env: left out ${gone} (${reason.slice(0, 160)})`);
      dropped.push({ requirement: gone, why: reason.slice(0, 400) });
      current = { ...current, requirements: current.requirements.filter((r) => r !== gone) };
    }
  }
}

/** An env build that failed for a reason of the era (not an unreachable index, which stops the build, nor a tree the copy cannot export). */
function unavailableEnv(err: unknown, what: string): { unavailable: string } {
  if (isUnexportable(err)) throw err;
  const reason =
    err instanceof GymError ? (typeof err.details?.reason === 'string' ? err.details.reason : err.message.split('\n')[0]!) : '';
  if (
    err instanceof GymError &&
    (err.code === 'ENV_UNAVAILABLE' || err.code === 'ENV_BUILD_FAILED') &&
    !/could not reach the package index/.test(reason)
  ) {
    return { unavailable: `${what} could not be built: ${reason}` };
  }
  throw err;
}

/**
 * Java: each change in the env its poms call for (`java_era.ts`: compile levels JDK 17 refuses
 * raised by -D), built once per distinct set of poms and overrides, since a Maven env is its
 * resolved dependencies and a later pom needs others. A pom no override can fit is the era's
 * `env-unavailable`.
 */
function javaEnvs(
  opts: BuildOptions,
  base: Extract<EnvSpec, { kind: 'java' }>,
  repo: string,
  workDir: string,
): (change: Change, testFiles: string[]) => Promise<ChangeEnv | { unavailable: string }> {
  const built = new Map<string, Promise<ChangeEnv | { unavailable: string }>>();
  return async (change, testFiles) => {
    const listing = await gitIn(repo, ['ls-tree', '-r', change.commit]);
    const poms = listing
      .split('\n')
      .map((l) => /^\d+ blob ([0-9a-f]+)\t(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => Boolean(m) && /(^|\/)pom\.xml$/.test(m![2]!));
    if (!poms.length) return { unavailable: `no pom.xml at ${change.commit.slice(0, 10)}: only Maven builds are mined` };
    const key = poms.map((m) => `${m[2]}:${m[1]}`).join(',');
    let env = built.get(key);
    if (!env) {
      env = (async () => {
        const texts: Record<string, string> = {};
        for (const m of poms) texts[m[2]!] = (await fileAt(repo, change.commit, m[2]!)) ?? '';
        const era = javaEraOf(texts);
        if (era.unavailable) return { unavailable: era.unavailable };
        // Scoped to the change's tests, the env is warmed by the first change's test classes (it resolves
        // Surefire's provider and what they need), not by every test of the project.
        const warm = opts.testScope === 'change' ? scopedRunner('java', defaultRunner('java'), testFiles) : undefined;
        const spec: EnvSpec = {
          ...base,
          args: [...base.args, ...era.args],
          ...(warm?.type === 'maven' && warm.tests.length ? { warmTests: warm.tests } : {}),
        };
        if (era.args.length) opts.progress?.(`  java env: ${era.from} (${era.args.join(' ')})`);
        return prepareEnv(opts, spec, repo, change.commit, workDir).then(
          (prepared): ChangeEnv => ({ spec, prepared, javaFrom: era.from }),
          (err: unknown) => unavailableEnv(err, `the Maven env of ${change.commit.slice(0, 10)} (${era.from})`),
        );
      })();
      built.set(key, env);
    }
    return forgetUnexportable(env, () => built.delete(key));
  };
}

async function prepareEnv(opts: BuildOptions, env: EnvSpec, repo: string, commit: string, workDir: string): Promise<PreparedEnv> {
  // Maven envs are keyed by the pom of the start state: the first candidate's tree stands in.
  const dir = path.join(workDir, 'env-seed');
  await fs.rm(dir, { recursive: true, force: true });
  await exportTree(repo, commit, dir);
  return opts.sandboxes.prepare(provisionalTask(opts, env, dir));
}

function provisionalTask(opts: BuildOptions, env: EnvSpec, dir: string): Task {
  return TaskSchema.parse({
    id: 'build-tasks-candidate',
    suite: 'humanevo-build',
    language: opts.language,
    kind: 'function',
    prompt: 'validation of a candidate',
    env,
    workspace: { type: 'dir', path: dir },
    tests: { hidden: { runner: opts.runner ?? defaultRunner(opts.language) } },
  });
}

interface ChangeContext {
  repo: string;
  change: Change;
  files: { status: 'A' | 'M' | 'D'; path: string }[];
  tests: string[];
  viable: Candidate[];
  workDir: string;
  env: PreparedEnv;
  runner: RunnerSpec;
  reject: (r: Rejection) => void;
  report: BuildReport;
  /** Results by tree id: a change's parent is usually the previous change, whose tree was run already. */
  runs: Map<string, TestStatus>;
}

async function runTree(opts: BuildOptions, ctx: ChangeContext, commit: string, dir: string): Promise<TestStatus> {
  // The same tree gives other results in another env (a change's parent is run in the change's era).
  const selection = ctx.runner.type === 'pytest' ? ctx.runner.args : ctx.runner.type === 'maven' ? ctx.runner.tests : [];
  const tree = `${ctx.env.key}:${(await gitIn(ctx.repo, ['rev-parse', `${commit}^{tree}`])).trim()}:${selection.join(' ')}`;
  const known = ctx.runs.get(tree);
  if (known) return known;
  const result = await runSuite(opts, ctx, dir);
  ctx.runs.set(tree, result);
  return result;
}

async function runSuite(opts: BuildOptions, ctx: ChangeContext, dir: string): Promise<TestStatus> {
  const sandbox = await opts.sandboxes.create({ seed: { dir }, env: sandboxEnv(ctx.env), labels: { 'benchgym.role': 'build-tasks' } });
  try {
    const run = await runTests(sandbox, ctx.env, ctx.runner, { timeoutMs: opts.testTimeoutMs ?? 600_000, signal: opts.signal });
    ctx.report.testRuns++;
    const status: TestStatus = new Map(run.tests.map((t) => [t.name, t.status]));
    if (!status.size) {
      // Maven's first [ERROR] lines say what failed (a plugin on this JDK, a compile error); else the end of the output.
      const lines = run.log.trim().split('\n');
      const errors = lines.filter((l) => /^\[ERROR\]\s*\S/.test(l)).slice(0, 3);
      silentRuns.set(
        status,
        `${run.command.slice(0, 300)} (exit ${run.exec.exitCode}): ${(errors.length ? errors : lines.slice(-6)).join(' | ').slice(0, 800)}`,
      );
    }
    return status;
  } finally {
    await sandbox.destroy().catch(() => {});
  }
}

/**
 * Fail-to-pass / pass-to-pass as the paper validates them: the suite at the parent, at the
 * change, and at the change with each candidate stubbed.
 */
async function validateChange(
  opts: BuildOptions,
  ctx: ChangeContext,
): Promise<Omit<BuiltTaskRecord, 'repo' | 'repo_path' | 'latest_commit'>[]> {
  const { repo, change, lang } = { ...ctx, lang: opts.language };
  const dir = (name: string) => path.join(ctx.workDir, `${change.commit.slice(0, 12)}-${name}`);
  const original = dir('change');
  const parent = dir('parent');
  await exportTree(repo, change.commit, original);
  await exportTree(repo, change.parent, parent);
  try {
    const before = await runTree(opts, ctx, change.parent, parent);
    const after = await runTree(opts, ctx, change.commit, original);
    const changeTests = [...after.keys()].filter((id) => testInFiles(lang, id, ctx.tests));
    const rejectAll = (reason: RejectReason, detail: string) => {
      for (const c of ctx.viable) ctx.reject({ commit: change.commit, function: c.fn.qualname, file: c.file, reason, detail });
      return [];
    };
    if (!after.size)
      return rejectAll('no-test-results', `the test suite reported no results at the change: ${silentRuns.get(after) ?? ''}`);
    const broken = [...before].filter(([id, s]) => s === 'passed' && after.has(id) && after.get(id) !== 'passed').map(([id]) => id);
    if (broken.length)
      return rejectAll(
        'breaks-passing-tests',
        `${broken.length} test(s) passing before the change fail after it: ${broken.slice(0, 5).join(', ')}`,
      );
    const changePassing = changeTests.filter((id) => after.get(id) === 'passed');
    if (!changePassing.length)
      return rejectAll('change-tests-fail', `none of the change's ${changeTests.length} test(s) pass with the original code`);
    const passToPass = [...before]
      .filter(([id, s]) => s === 'passed' && after.get(id) === 'passed')
      .map(([id]) => id)
      .sort();
    const out: Omit<BuiltTaskRecord, 'repo' | 'repo_path' | 'latest_commit'>[] = [];
    for (const c of ctx.viable) {
      const stubbed = dir(`stub-${slug(c.fn.qualname)}`);
      await fs.cp(original, stubbed, { recursive: true });
      await overlay(stubbed, { [c.file]: stubFunction(lang, c.source, c.fn) });
      let withStub: TestStatus;
      try {
        withStub = await runSuite(opts, ctx, stubbed);
      } finally {
        await fs.rm(stubbed, { recursive: true, force: true });
      }
      // A test of the change that the stub makes fail (or that vanishes: a collection or compile error).
      const failToPass = changePassing.filter((id) => withStub.get(id) !== 'passed' && withStub.get(id) !== 'skipped').sort();
      if (!failToPass.length) {
        ctx.reject({
          commit: change.commit,
          function: c.fn.qualname,
          file: c.file,
          reason: 'no-fail-to-pass',
          detail: `all ${changePassing.length} passing test(s) of the change still pass with the function stubbed`,
        });
        continue;
      }
      const docstring = c.fn.docstring!.trim();
      out.push({
        format: BUILT_FORMAT,
        instance_id: slug(`${change.commit.slice(0, 10)}-${c.fn.qualname}`),
        language: lang,
        commit: change.commit,
        base_commit: change.parent,
        date: change.date,
        subject: change.subject,
        merge: change.merge,
        target: { file: c.file, qualname: c.fn.qualname, name: c.fn.name, cls: c.fn.cls, lines: c.fn.lines },
        signature: c.fn.signature,
        docstring_detailed: docstring,
        docstring_brief: briefOf(docstring),
        dependency_level: c.fn.dependency,
        references: { project: c.fn.projectRefs, class: c.fn.classRefs },
        test_files: ctx.tests,
        production_files: ctx.files.filter((f) => !isTestPath(lang, f.path)),
        fail_to_pass: failToPass,
        // The change's other tests that pass either way guard against breaking what works.
        pass_to_pass: [...new Set([...passToPass, ...changePassing.filter((id) => !failToPass.includes(id))])].sort(),
        env: opts.env,
        test_runner: ctx.runner,
        test_timeout_ms: opts.testTimeoutMs ?? 600_000,
      });
    }
    return out;
  } finally {
    await fs.rm(original, { recursive: true, force: true });
    await fs.rm(parent, { recursive: true, force: true });
  }
}
