import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../../src/errors.ts';
import { isSourcePath, isTestPath } from './functions.ts';
import { changedFiles, isUnexportable, listChanges, resolveRev, type Change } from './history.ts';
import { BuiltTaskRecord } from './record.ts';
import type { BuildOptions } from './build_options.ts';
import type { BuildReport, ChangeOutcome, EnvUse, Rejection } from './build_report.ts';
import { addedFunctions, type Candidate } from './candidates.ts';
import { changeEnvs, type ChangeEnv } from './change_env.ts';
import { defaultRunner, noseRunner, scopedRunner, withEraArgs } from './runner_specs.ts';
import { validateChange, type TestStatus } from './validate_change.ts';

// The builder's pieces, for the tests that import them from here (test/envs/humanevo/).
export type { BuildOptions } from './build_options.ts';
export type { BuildReport, ChangeOutcome, RejectReason, Rejection } from './build_report.ts';
export { addedFunctions } from './candidates.ts';
export { defaultRunner, noseRunner, scopedRunner, testInFiles } from './runner_specs.ts';

/** A repository's name from its folder (`x/toolz`, `x/toolz.git`, a fetched `x/toolz/repo`: `toolz`). */
export function repoFolderName(repo: string): string {
  return path.basename(
    path
      .resolve(repo)
      .replace(/\/(repo|\.git)\/?$/, '')
      .replace(/\.git$/, ''),
  );
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
        `[${index + 1}/${changes.length}] ${change.commit.slice(0, 10)} ${change.subject.slice(0, 70)}` +
          `${etaNote(walkedHere, Date.now() - walkStarted, changes.length - index)}`,
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
