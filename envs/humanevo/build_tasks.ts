import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CliCommand } from '../../src/cli/command.ts';
import { intFlag, parseFlags } from '../../src/cli/options.ts';
import { defaultDataDir } from '../../src/episode/gym.ts';
import { GymError } from '../../src/errors.ts';
import { LocalSandboxFactory } from '../../src/sandbox/local/index.ts';
import type { EnvSpec } from '../../src/tasks/schema.ts';
import { buildTasks, type BuildReport } from './builder.ts';

const USAGE = `benchgym build-tasks: mines HumanEvo tasks from a git history: changes that add a function and its
tests, each validated by running the project's tests (fail-to-pass with the function stubbed, pass-to-pass with it).
Validated tasks are written to --out as JSON Lines (serve them with --suite humanevo=FILE.jsonl); the rest are
counted by reason. Exit 1 when no task was validated.

Usage:
  benchgym build-tasks --repo PATH --language python|java [--from REV] [--to REV] [--limit N] --out FILE.jsonl
                 [--python 3.11] [--requirement SPEC]... [--jdk 17] [--test-arg ARG]... [--test-timeout S]
                 [--repo-name owner/name] [--json]

Options:
  --repo PATH        a git repository, bare or not
  --language L       python or java
  --from REV, --to REV
                     the first-parent history walked: after REV (default: from the first commit), up to REV
                     (default HEAD; also the evolving-ignored start state)
  --limit N          stop after N validated tasks
  --out FILE.jsonl   where validated tasks are written
  --python V         the Python of the project's env (default 3.11); --requirement SPEC: a pip requirement (repeatable)
  --jdk V            the JDK of a Java project (default 17)
  --test-arg ARG     an argument of the test command (repeatable); --test-timeout S: per test run (default 600)
  --repo-name N      the repository's display name in the tasks (default: its folder's name)
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
  if (values.python && !/^3\.\d+$/.test(values.python)) throw new GymError('INVALID_ARGUMENT', `invalid --python: '${values.python}' (a version such as 3.11)`);
  if (language === 'java' && (values.python || values.requirement?.length)) throw new GymError('INVALID_ARGUMENT', '--python and --requirement are for Python repositories');
  const isolation = values.isolation ?? 'auto';
  if (!['auto', 'bwrap', 'none'].includes(isolation)) throw new GymError('INVALID_ARGUMENT', `invalid --isolation: '${isolation}' (auto, bwrap or none)`);
  const limit = values.limit !== undefined ? intFlag(values.limit, 'limit', 0, 1, 1_000_000) : undefined;
  const testTimeoutMs = intFlag(values['test-timeout'], 'test-timeout', 600, 1, 24 * 3600) * 1000;
  const env: EnvSpec =
    language === 'python'
      ? { kind: 'python', version: values.python ?? '3.11', requirements: values.requirement ?? [] }
      : { kind: 'java', jdk: values.jdk ?? '17', build: 'maven', args: [] };
  const runner = language === 'python' ? { type: 'pytest' as const, args: values['test-arg'] ?? [] } : { type: 'maven' as const, tests: values['test-arg'] ?? [], args: [] };

  const dataDir = path.resolve(values['data-dir'] ?? defaultDataDir());
  const baseDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-build-sandboxes-'));
  const sandboxes = new LocalSandboxFactory({ baseDir, isolation: isolation as 'auto', cacheDir: path.resolve(values['cache-dir'] ?? process.env.BENCHGYM_CACHE ?? dataDir) });
  const out = path.resolve(values.out);
  await fs.mkdir(path.dirname(out), { recursive: true });
  await fs.writeFile(out, '');
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
      runner,
      testTimeoutMs,
      sandboxes,
      signal: stop.signal,
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
      `${report.repo}: ${report.validated} validated task(s) from ${report.walked} of ${report.changes} change(s) (${report.candidates} candidate function(s), ${report.testRuns} test runs) in ${(report.durationMs / 1000).toFixed(1)} s\n` +
        `rejected: ${reasons || 'none'}\n${out}\n`,
    );
  }
  return report.validated > 0 ? 0 : 1;
}

export const buildTasksCommand: CliCommand = {
  name: 'build-tasks',
  summary: 'mine HumanEvo tasks from a git history, validated by execution',
  usage: USAGE,
  run: buildTasksCmd,
};
