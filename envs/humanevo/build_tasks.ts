import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { CliCommand } from '../../src/cli/command.ts';
import { intFlag, parseFlags } from '../../src/cli/options.ts';
import { defaultDataDir } from '../../src/episode/gym.ts';
import { GymError } from '../../src/errors.ts';
import { LocalSandboxFactory } from '../../src/sandbox/local/index.ts';
import type { EnvSpec } from '../../src/tasks/schema.ts';
import { buildTasks, type BuildReport, type ChangeOutcome } from './builder.ts';

const USAGE = `benchgym build-tasks: mines HumanEvo tasks from a git history: changes that add a function and its
tests, each validated by running the project's tests (fail-to-pass with the function stubbed, pass-to-pass with it).
Validated tasks are written to --out as JSON Lines (serve them with --suite humanevo=FILE.jsonl); the rest are
counted by reason. Exit 1 when no task was validated.

Usage:
  benchgym build-tasks --repo PATH --language python|java [--from REV] [--to REV] [--limit N] --out FILE.jsonl
                 [--python era|3.X] [--requirement SPEC]... [--jdk 17] [--test-arg ARG]... [--test-timeout S]
                 [--repo-name owner/name] [--resume] [--json]

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
  --repo-name N      the repository's display name in the tasks (default: its folder's name)
  --resume           go on with a build that was stopped: the changes its journal (FILE.jsonl.progress.jsonl,
                     one line per walked change) holds are counted, not walked again; its tasks stay in --out
  --json             the build report as JSON
  --data-dir DIR, --cache-dir DIR, --isolation MODE
                     as for benchgym serve

Example:
  benchgym build-tasks --repo path/to/more-itertools --language python --limit 5 --out tasks.jsonl
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
    language: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    limit: { type: 'string' },
    out: { type: 'string' },
    python: { type: 'string' },
    requirement: { type: 'string', multiple: true },
    jdk: { type: 'string' },
    'test-arg': { type: 'string', multiple: true },
    'test-timeout': { type: 'string' },
    'repo-name': { type: 'string' },
    resume: { type: 'boolean' },
    json: { type: 'boolean' },
    'data-dir': { type: 'string' },
    'cache-dir': { type: 'string' },
    isolation: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (!values.repo) throw new GymError('INVALID_ARGUMENT', 'missing --repo PATH (a git repository, bare or not)');
  if (!existsSync(values.repo)) throw new GymError('INVALID_ARGUMENT', `invalid --repo: ${values.repo} does not exist`);
  const language = values.language;
  if (language !== 'python' && language !== 'java') throw new GymError('INVALID_ARGUMENT', `invalid --language: '${language ?? ''}' (python or java)`);
  if (!values.out) throw new GymError('INVALID_ARGUMENT', 'missing --out FILE.jsonl (where validated tasks are written)');
  if (values.python && values.python !== 'era' && !/^3\.\d+$/.test(values.python)) throw new GymError('INVALID_ARGUMENT', `invalid --python: '${values.python}' (era, or a version such as 3.11)`);
  const era = language === 'python' && (values.python ?? 'era') === 'era';
  if (language === 'java' && (values.python || values.requirement?.length)) throw new GymError('INVALID_ARGUMENT', '--python and --requirement are for Python repositories');
  const isolation = values.isolation ?? 'auto';
  if (!['auto', 'bwrap', 'none'].includes(isolation)) throw new GymError('INVALID_ARGUMENT', `invalid --isolation: '${isolation}' (auto, bwrap or none)`);
  const limit = values.limit !== undefined ? intFlag(values.limit, 'limit', 0, 1, 1_000_000) : undefined;
  const testTimeoutMs = intFlag(values['test-timeout'], 'test-timeout', 600, 1, 24 * 3600) * 1000;
  const env: EnvSpec =
    language === 'python'
      ? { kind: 'python', version: era ? '3.11' : values.python!, requirements: values.requirement ?? [] }
      : { kind: 'java', jdk: values.jdk ?? '17', build: 'maven', args: [] };
  const runner = language === 'python' ? { type: 'pytest' as const, args: values['test-arg'] ?? [] } : { type: 'maven' as const, tests: values['test-arg'] ?? [], args: [] };

  const dataDir = path.resolve(values['data-dir'] ?? defaultDataDir());
  const baseDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-build-sandboxes-'));
  const sandboxes = new LocalSandboxFactory({ baseDir, isolation: isolation as 'auto', cacheDir: path.resolve(values['cache-dir'] ?? process.env.BENCHGYM_CACHE ?? dataDir) });
  const out = path.resolve(values.out);
  await fs.mkdir(path.dirname(out), { recursive: true });
  const journal = `${out}.progress.jsonl`;
  const done = values.resume ? await readJournal(out, journal) : new Map<string, ChangeOutcome>();
  if (!values.resume) {
    await fs.writeFile(out, '');
    await fs.writeFile(journal, '');
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on('SIGINT', onSignal);
  let report: BuildReport;
  try {
    report = await buildTasks({
      repo: values.repo,
      language,
      from: values.from,
      to: values.to,
      limit,
      repoName: values['repo-name'],
      env,
      ...(era ? { eraEnv: { requirements: values.requirement ?? [] } } : {}),
      runner,
      testTimeoutMs,
      sandboxes,
      signal: stop.signal,
      done,
      onChange: (outcome) => fs.appendFile(journal, JSON.stringify(outcome) + '\n'),
      progress: (m) => process.stderr.write(`${m}\n`),
      onTask: async (record) => {
        await fs.appendFile(out, JSON.stringify(record) + '\n');
        process.stderr.write(`  task ${record.instance_id} (${record.dependency_level}, ${record.fail_to_pass.length} fail-to-pass)\n`);
      },
      onReject: (r) => {
        if (r.function) process.stderr.write(`  rejected ${r.function}: ${r.reason}${r.detail ? ` (${r.detail.slice(0, 160)})` : ''}\n`);
      },
    });
  } finally {
    process.off('SIGINT', onSignal);
    await sandboxes.close();
    await fs.rm(baseDir, { recursive: true, force: true });
  }
  if (values.json) {
    process.stdout.write(JSON.stringify({ ...report, out }, null, 2) + '\n');
  } else {
    const reasons = Object.entries(report.rejected).map(([k, v]) => `${k}: ${v}`).join(', ');
    process.stdout.write(
      `${report.repo}: ${report.validated} validated task(s) from ${report.walked} of ${report.changes} change(s)${report.resumed ? ` (${report.resumed} walked by the run resumed)` : ''} (${report.candidates} candidate function(s), ${report.testRuns} test runs) in ${(report.durationMs / 1000).toFixed(1)} s\n` +
        `rejected: ${reasons || 'none'}\n` +
        report.envs.map((e) => `env ${e.python ? `Python ${e.python}` : e.key}${e.cutoff ? ` (PyPI as of ${e.cutoff.slice(0, 10)})` : ''}: ${e.changes} change(s), ${e.tasks} task(s)${e.from ? `; ${e.from}` : ''}\n`).join('') +
        `${out}\n`,
    );
  }
  return report.validated > 0 ? 0 : 1;
}

const JournalLine = z.object({
  commit: z.string(),
  rejections: z.array(z.object({ commit: z.string(), reason: z.string(), function: z.string().optional(), file: z.string().optional(), detail: z.string().optional() }).passthrough()),
  tasks: z.array(z.string()),
  candidates: z.number(),
  testRuns: z.number(),
});

/**
 * A stopped build's journal: the changes it walked to the end. Tasks in --out whose change
 * is not in the journal (the build stopped while it was being walked) are dropped, since
 * that change is walked again; a torn last line is ignored.
 */
async function readJournal(out: string, journal: string): Promise<Map<string, ChangeOutcome>> {
  const done = new Map<string, ChangeOutcome>();
  const lines = existsSync(journal) ? (await fs.readFile(journal, 'utf8')).split('\n').filter(Boolean) : [];
  for (const [i, line] of lines.entries()) {
    let parsed: z.infer<typeof JournalLine>;
    try {
      parsed = JournalLine.parse(JSON.parse(line));
    } catch (err) {
      if (i === lines.length - 1) break; // written when the build was killed
      throw new GymError('INVALID_ARGUMENT', `--resume: ${journal}:${i + 1} is not a build-tasks journal line (${err instanceof Error ? err.message.slice(0, 200) : String(err)})`);
    }
    done.set(parsed.commit, parsed as ChangeOutcome);
  }
  const kept = new Set([...done.values()].flatMap((o) => o.tasks));
  const tasks = existsSync(out) ? (await fs.readFile(out, 'utf8')).split('\n').filter(Boolean) : [];
  const keep = tasks.filter((l) => {
    try {
      return kept.has((JSON.parse(l) as { instance_id?: string }).instance_id ?? '');
    } catch {
      return false;
    }
  });
  await fs.writeFile(out, keep.map((l) => l + '\n').join(''));
  // The journal without a torn last line, so that appends start on a line of their own.
  await fs.writeFile(journal, [...done.values()].map((o) => JSON.stringify(o) + '\n').join(''));
  return done;
}

export const buildTasksCommand: CliCommand = {
  name: 'build-tasks',
  summary: 'mine HumanEvo tasks from a git history, validated by execution',
  usage: USAGE,
  run: buildTasksCmd,
};
