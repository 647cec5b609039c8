import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CliCommand } from '../../src/cli/command.ts';
import { intFlag, parseFlags } from '../../src/cli/options.ts';
import { defaultDataDir } from '../../src/project.ts';
import { GymError } from '../../src/errors.ts';
import { LocalSandboxFactory } from '../../src/sandbox/local/index.ts';
import type { BuildReport } from './builder.ts';
import { buildMany, MANY_REPORT, readTargets, type ManyReport } from './build_many.ts';
import { BuildTarget, runBuild } from './build_run.ts';

const USAGE = `benchgym build-tasks: mines HumanEvo tasks from a git history: changes that add a function and its
tests, each validated by running the project's tests (fail-to-pass with the function stubbed, pass-to-pass with it).
Validated tasks are written to --out as JSON Lines (serve them with --suite humanevo=FILE.jsonl); the rest are
counted by reason. Exit 1 when no task was validated.

Usage:
  benchgym build-tasks --repo PATH --language python|java [--from REV] [--to REV] [--limit N] --out FILE.jsonl
                 [--python era|3.X] [--requirement SPEC]... [--jdk 17] [--test-arg ARG]... [--test-timeout S]
                 [--test-scope suite|change] [--repo-name owner/name] [--resume] [--json]
  benchgym build-tasks --repos REPOS.json --out-dir DIR [--jobs N] [--resume] [--json]

Options:
  --repo PATH        a git repository, bare or not
  --language L       python or java
  --from REV, --to REV
                     the first-parent history walked: after REV (default: from the first commit), up to REV
                     (default HEAD; also the evolving-ignored start state)
  --limit N          stop after N validated tasks
  --out FILE.jsonl   where validated tasks are written
  --python V         era (default): each change is tested in the env of its era, the Python the repository declared
                     at that commit (requires-python, classifiers, tox, CI; else the one current at its date) among
                     this machine's, with its dependencies and test runner as PyPI held them then (uv resolves; without
                     uv, the newest that fit that Python); a change whose era env cannot be had is rejected as
                     env-unavailable. 3.X: one env for every change.
                     --requirement SPEC: a pip requirement of every env (repeatable)
  --jdk V            the JDK of a Java project (default 17)
  --test-arg ARG     an argument of the test command (repeatable); --test-timeout S: per test run (default 600)
  --test-scope S     suite (default): each change is validated, and its task scored, with the project's whole
                     suite; change: with the test files the change adds or edits only (the PR's tests, paper
                     §3.2.4; a Java change then runs its test classes, not every Surefire test)
  --repo-name N      the repository's display name in the tasks (default: its folder's name)
  --resume           go on with a build that was stopped: the changes its journal (FILE.jsonl.progress.jsonl,
                     one line per walked change) holds are counted, not walked again; its tasks stay in --out
  --repos FILE       several repositories in one run: a JSON array of {"repo", "language", "name", "from", "to",
                     "limit", "python", "requirements", "jdk", "testArgs", "testTimeoutS", "testScope"} (the flags above); each is
                     mined into DIR/<owner>__<name>.jsonl (--out-dir DIR) with its own journal, --jobs N of them at a
                     time (default: one per core, at most one per repository); DIR/build-report.json is rewritten as
                     each ends; --suite humanevo=DIR serves them all. A repository that fails is reported, the others
                     go on; exit 1 when one failed or none gave a task
  --json             the build report as JSON
  --data-dir DIR, --cache-dir DIR, --isolation MODE
                     as for benchgym serve

Example:
  benchgym build-tasks --repo path/to/more-itertools --language python --limit 5 --out tasks.jsonl
  benchgym build-tasks --repos repos.json --out-dir tasks/ --jobs 2
`;

/**
 * `benchgym build-tasks`: walks a repository's history for changes that add a function or
 * method together with tests, validates each candidate by running the project's tests
 * (fail-to-pass with the function stubbed, pass-to-pass with it), and writes the validated
 * ones as JSON Lines; the rest are counted by reason.
 */
export async function buildTasksCmd(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    repo: { type: 'string' },
    repos: { type: 'string' },
    language: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    limit: { type: 'string' },
    out: { type: 'string' },
    'out-dir': { type: 'string' },
    jobs: { type: 'string' },
    python: { type: 'string' },
    requirement: { type: 'string', multiple: true },
    jdk: { type: 'string' },
    'test-arg': { type: 'string', multiple: true },
    'test-timeout': { type: 'string' },
    'test-scope': { type: 'string' },
    'repo-name': { type: 'string' },
    resume: { type: 'boolean' },
    json: { type: 'boolean' },
    'data-dir': { type: 'string' },
    'cache-dir': { type: 'string' },
    isolation: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  const isolation = values.isolation ?? 'auto';
  if (!['auto', 'bwrap', 'none'].includes(isolation))
    throw new GymError('INVALID_ARGUMENT', `invalid --isolation: '${isolation}' (auto, bwrap or none)`);
  const many = values.repos !== undefined;
  if (many) {
    const single = (
      [
        'repo',
        'language',
        'from',
        'to',
        'limit',
        'out',
        'python',
        'requirement',
        'jdk',
        'test-arg',
        'test-timeout',
        'test-scope',
        'repo-name',
      ] as const
    ).filter((k) => values[k] !== undefined);
    if (single.length)
      throw new GymError('INVALID_ARGUMENT', `--repos takes each repository's settings from its file: --${single[0]} is for one --repo`);
    if (!values['out-dir'])
      throw new GymError('INVALID_ARGUMENT', 'missing --out-dir DIR (where --repos writes a task file per repository)');
  } else if (values['out-dir'] !== undefined || values.jobs !== undefined) {
    throw new GymError(
      'INVALID_ARGUMENT',
      `--${values['out-dir'] !== undefined ? 'out-dir' : 'jobs'} is for --repos FILE (one --repo writes --out FILE.jsonl)`,
    );
  }
  const targets = many ? await readTargets(values.repos!) : [singleTarget(values)];
  const jobs = intFlag(values.jobs, 'jobs', Math.min(targets.length, os.availableParallelism()), 1, 64);

  const dataDir = path.resolve(values['data-dir'] ?? defaultDataDir());
  const baseDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-build-sandboxes-'));
  const sandboxes = new LocalSandboxFactory({
    baseDir,
    isolation: isolation as 'auto',
    cacheDir: path.resolve(values['cache-dir'] ?? process.env.BENCHGYM_CACHE ?? dataDir),
  });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  // Stopped (Ctrl-C, or a supervisor's SIGTERM), the change being walked is dropped, the journal
  // stays whole and the sandboxes are closed: --resume goes on from there.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, onSignal);
  const log = (m: string) => process.stderr.write(`${m}\n`);
  try {
    if (many) {
      const report = await buildMany(targets, {
        outDir: values['out-dir']!,
        jobs,
        resume: values.resume,
        sandboxes,
        signal: stop.signal,
        progress: log,
        onTask: (repo, record) =>
          log(`${repo}   task ${record.instance_id} (${record.dependency_level}, ${record.fail_to_pass.length} fail-to-pass)`),
      });
      process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : manySummary(report, path.resolve(values['out-dir']!)));
      return report.validated > 0 && report.repos.every((r) => r.status === 'done') ? 0 : 1;
    }
    const out = path.resolve(values.out!);
    const report = await runBuild(targets[0]!, {
      out,
      resume: values.resume,
      sandboxes,
      signal: stop.signal,
      progress: log,
      onTask: (record) => log(`  task ${record.instance_id} (${record.dependency_level}, ${record.fail_to_pass.length} fail-to-pass)`),
      onReject: (r) => {
        if (r.function) log(`  rejected ${r.function}: ${r.reason}${r.detail ? ` (${r.detail.slice(0, 160)})` : ''}`);
      },
    });
    process.stdout.write(values.json ? JSON.stringify({ ...report, out }, null, 2) + '\n' : singleSummary(report) + `${out}\n`);
    return report.validated > 0 ? 0 : 1;
  } finally {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.off(sig, onSignal);
    await sandboxes.close();
    await fs.rm(baseDir, { recursive: true, force: true });
  }
}

/** The flag of each BuildTarget field, for errors on `--repo PATH ...`. */
const FLAG_OF: Record<string, string> = {
  repo: 'repo',
  language: 'language',
  from: 'from',
  to: 'to',
  python: 'python',
  requirements: 'requirement',
  jdk: 'jdk',
  testArgs: 'test-arg',
  testScope: 'test-scope',
};

/** The target of `--repo PATH ...`, checked by the same schema as a `--repos` entry (errors name the flag). */
function singleTarget(values: Record<string, string | string[] | boolean | undefined>): BuildTarget {
  const str = (k: string) => values[k] as string | undefined;
  const repo = str('repo');
  if (!repo) throw new GymError('INVALID_ARGUMENT', 'missing --repo PATH (a git repository, bare or not), or --repos FILE for several');
  if (!existsSync(repo)) throw new GymError('INVALID_ARGUMENT', `invalid --repo: ${repo} does not exist`);
  if (!str('out')) throw new GymError('INVALID_ARGUMENT', 'missing --out FILE.jsonl (where validated tasks are written)');
  const raw = {
    repo,
    language: str('language') ?? '',
    from: str('from'),
    to: str('to'),
    ...(str('limit') !== undefined ? { limit: intFlag(str('limit'), 'limit', 0, 1, 1_000_000) } : {}),
    python: str('python'),
    requirements: (values.requirement as string[] | undefined)?.length ? (values.requirement as string[]) : undefined,
    jdk: str('jdk'),
    testArgs: (values['test-arg'] as string[] | undefined) ?? [],
    testTimeoutS: intFlag(str('test-timeout'), 'test-timeout', 600, 1, 24 * 3600),
    testScope: str('test-scope'),
  };
  const parsed = BuildTarget.safeParse(Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined)));
  // --repo-name is any display name here (it names no file, as a --repos entry's does).
  if (parsed.success) return { ...parsed.data, ...(str('repo-name') ? { name: str('repo-name') } : {}) };
  const issue = parsed.error.issues[0]!;
  const field = String(issue.path[0] ?? '');
  if (issue.code === 'custom') throw new GymError('INVALID_ARGUMENT', `--python and --requirement are for Python repositories`);
  throw new GymError(
    'INVALID_ARGUMENT',
    `invalid --${FLAG_OF[field] ?? field}: '${String(raw[field as keyof typeof raw] ?? '')}' (${field === 'language' ? 'python or java' : issue.message})`,
  );
}

function rejectedLine(rejected: BuildReport['rejected']): string {
  return (
    Object.entries(rejected)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ') || 'none'
  );
}

function singleSummary(report: BuildReport): string {
  return (
    `${report.repo}: ${report.validated} validated task(s) from ${report.walked} of ${report.changes} change(s)${report.resumed ? ` (${report.resumed} walked by the run resumed)` : ''} (${report.candidates} candidate function(s), ${report.testRuns} test runs) in ${(report.durationMs / 1000).toFixed(1)} s${report.resumed ? `; ${(report.walkMs / 1000).toFixed(1)} s of walking over all runs` : ''}${report.validated ? `, ${(report.walkMs / 1000 / report.validated).toFixed(1)} s per task` : ''}\n` +
    `rejected: ${rejectedLine(report.rejected)}\n` +
    report.envs
      .map(
        (e) =>
          `env ${e.python ? `Python ${e.python}` : e.key}${e.cutoff ? ` (PyPI as of ${e.cutoff.slice(0, 10)})` : ''}: ${e.changes} change(s), ${e.tasks} task(s)${e.from ? `; ${e.from}` : ''}\n`,
      )
      .join('')
  );
}

/** One line per repository (tasks, changes, time, time per task, rejects by reason), then the totals. */
function manySummary(report: ManyReport, outDir: string): string {
  const lines = report.repos.map((b) => {
    const r = b.report;
    if (!r) return `${b.name}: ${b.status}${b.error ? ` (${b.error.code}: ${b.error.message.slice(0, 200)})` : ''}`;
    // The build's cost is its walking time over every run (a resumed run alone costs almost nothing).
    const perTask = r.validated ? `, ${(r.walkMs / 1000 / r.validated).toFixed(1)} s/task` : '';
    return `${b.name}: ${r.validated} task(s) from ${r.walked} of ${r.changes} change(s)${r.resumed ? ` (${r.resumed} resumed)` : ''} in ${(r.durationMs / 1000).toFixed(1)} s (${(r.walkMs / 1000).toFixed(1)} s walking over all runs)${perTask}; rejected: ${rejectedLine(r.rejected)}`;
  });
  return `${lines.join('\n')}\ntotal: ${report.validated} task(s) from ${report.walked} change(s) of ${report.repos.length} repositories, ${report.jobs} at a time, in ${(report.durationMs / 1000).toFixed(1)} s; rejected: ${rejectedLine(report.rejected)}\n${path.join(outDir, MANY_REPORT)}\n`;
}

export const buildTasksCommand: CliCommand = {
  name: 'build-tasks',
  summary: 'mine HumanEvo tasks from a git history, validated by execution',
  usage: USAGE,
  run: buildTasksCmd,
};
