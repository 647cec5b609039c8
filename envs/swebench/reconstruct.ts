import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { CliCommand } from '../../src/cli/command.ts';
import { parseFlags } from '../../src/cli/options.ts';
import { defaultDataDir } from '../../src/project.ts';
import { chooseJdk, installedJdks } from '../../src/env/jdk.ts';
import { GymError } from '../../src/errors.ts';
import { extractTree, git } from '../../src/repo/index.ts';
import { javaTestClass, mavenTestSelection } from '../../src/tasks/java_tests.ts';
import { mavenResolutionFailed } from '../../src/env/maven.ts';
import { junitTestId, parseJUnitXml, type TestStatus } from '../../src/scoring/junit.ts';
import { specFor, type BuildEdit } from './specs.ts';
import { isolatedGitEnv, ISOLATED_GIT_FLAGS } from '../../src/sandbox/git_isolation.ts';

/**
 * Reconstructs SWE-bench-schema instances from a repository's history, the way SWE-bench
 * collects them: the pull request's change (its merge commit, else the squash commit naming
 * `(#PR)`, else a commit naming `#PR`), split into the fix (`patch`) and the tests
 * (`test_patch`: files under `src/test/`), based on the change's first parent;
 * FAIL_TO_PASS and PASS_TO_PASS from running the test classes the test patch touches (when it
 * touches only helpers, the test classes that use them) with the test patch alone and with both
 * patches (Maven, offline once the shared local repository has what the build needs); the
 * problem statement from the history (the PR title and commit messages), marked as such.
 */

export const InstanceId = z.string().regex(/^[\w.-]+__[\w.-]+-\d+$/, "'owner__name-<PR number>'");

export interface Change {
  /** How it was found: a merge commit, a squash commit `(#N)`, or a commit naming `#N`. */
  method: 'merge-commit' | 'squash-commit' | 'commit-mention';
  commit: string;
  base: string;
  subject: string;
  message: string;
  date: string;
}

const run = (cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }) =>
  new Promise<{ ok: boolean; out: string }>((resolve) =>
    execFile(
      cmd,
      args,
      { cwd: opts.cwd, env: opts.env ?? process.env, timeout: opts.timeoutMs ?? 30 * 60_000, maxBuffer: 256 * 1024 * 1024 },
      (err, out, errOut) => resolve({ ok: !err, out: `${out}${errOut}` }),
    ),
  );

/** The change of pull request `pr` in the repository at `repoDir` (bare or not), or null. */
export async function findChange(repoDir: string, pr: number): Promise<Change | null> {
  const log = async (args: string[]) =>
    (await git(['log', '--all', '--format=%H%x1f%P%x1f%cI%x1f%s%x1f%B%x1e', ...args], { cwd: repoDir }))
      .split('\x1e')
      .map((r) => r.trim())
      .filter(Boolean)
      .map((r) => {
        const [commit, parents, date, subject, message] = r.split('\x1f') as [string, string, string, string, string];
        return { commit, parents: parents.split(' ').filter(Boolean), date, subject, message: message.trim() };
      });
  const merge = (await log(['--merges', '-E', `--grep=^Merge pull request #${pr}( |$)`])).at(-1);
  if (merge && merge.parents.length >= 2)
    return {
      method: 'merge-commit',
      commit: merge.commit,
      base: merge.parents[0]!,
      subject: merge.subject,
      message: merge.message,
      date: merge.date,
    };
  const squash = (await log(['--no-merges', '-E', `--grep=\\(#${pr}\\)`])).filter((c) => new RegExp(`\\(#${pr}\\)`).test(c.subject)).at(-1);
  if (squash && squash.parents.length === 1)
    return {
      method: 'squash-commit',
      commit: squash.commit,
      base: squash.parents[0]!,
      subject: squash.subject,
      message: squash.message,
      date: squash.date,
    };
  const mention = (await log(['--no-merges', '-E', `--grep=#${pr}([^0-9]|$)`])).at(-1);
  if (mention && mention.parents.length === 1)
    return {
      method: 'commit-mention',
      commit: mention.commit,
      base: mention.parents[0]!,
      subject: mention.subject,
      message: mention.message,
      date: mention.date,
    };
  return null;
}

export const isTestFile = (file: string) => /(^|\/)src\/test\//.test(file);

/** The change split into the fix and the test patch (binary-safe full-index diffs). */
export async function splitChange(
  repoDir: string,
  change: Change,
): Promise<{ patch: string; testPatch: string; testFiles: string[]; files: string[] }> {
  const files = (await git(['diff', '--name-only', change.base, change.commit], { cwd: repoDir })).split('\n').filter(Boolean);
  const tests = files.filter(isTestFile);
  const main = files.filter((f) => !isTestFile(f));
  const diff = async (paths: string[]) =>
    paths.length ? git(['diff', '--binary', '--full-index', change.base, change.commit, '--', ...paths], { cwd: repoDir }) : '';
  return { patch: await diff(main), testPatch: await diff(tests), testFiles: tests, files };
}

/** A Java test source, `<module>/src/test/java/a/b/C.java`: the module and the class's path. */
const TEST_SOURCE = /^(?:(.*)\/)?src\/test\/java\/(.+)\.java$/;

/** `module:Class` ids of the test classes among test files (`<module>/src/test/java/a/b/C.java`). */
export function testClassesOf(testFiles: string[]): string[] {
  const out: string[] = [];
  for (const f of testFiles) {
    const m = TEST_SOURCE.exec(f);
    if (!m) continue;
    out.push(`${m[1] ? `${m[1]}:` : ''}${m[2]!.replace(/\//g, '.')}`);
  }
  return [...new Set(out)];
}

/** Surefire's default includes (`Test*`, `*Test`, `*Tests`, `*TestCase`), or a JUnit test method in the text. */
const declaresTests = (file: string, text: string) =>
  /(^|\/)(Test[^/]*|[^/]*(Test|Tests|TestCase))\.java$/.test(file) || /@Test\b|\bpublic\s+void\s+test\w*\s*\(/.test(text);

/**
 * The test classes to run for a change's test files: the touched ones, as SWE-bench-java lists
 * them. When none of them is a test (the change touches only a fixture or helper the fix needs:
 * dubbo-9187 changes `InjectExtImpl` alone), the test classes of each helper's module that name
 * it, as the change's tree has them.
 */
export async function testClassesToRun(repoDir: string, commit: string, testFiles: string[]): Promise<string[]> {
  const show = (file: string) => git(['show', `${commit}:${file}`], { cwd: repoDir }).catch(() => null);
  const sources = testFiles.filter((f) => TEST_SOURCE.test(f));
  const texts = await Promise.all(sources.map(show));
  // A source the change deletes counts as a test of its own (its class simply does not run).
  if (sources.some((f, i) => texts[i] === null || declaresTests(f, texts[i]!))) return testClassesOf(testFiles);
  const users: string[] = [];
  for (const file of sources) {
    const root = file.slice(0, file.indexOf('src/test/java/') + 'src/test/java'.length);
    const hits = await git(['grep', '-l', '-w', '-F', path.basename(file, '.java'), commit, '--', root], { cwd: repoDir }).catch(() => '');
    users.push(
      ...hits
        .split('\n')
        .map((l) => l.replace(`${commit}:`, '').trim())
        .filter((f) => TEST_SOURCE.test(f) && f !== file),
    );
  }
  const candidates = [...new Set(users)];
  const userTexts = await Promise.all(candidates.map(show));
  return testClassesOf(candidates.filter((f, i) => userTexts[i] !== null && declaresTests(f, userTexts[i]!)));
}

interface RunResult {
  tests: Map<string, TestStatus>;
  log: string;
  compiled: boolean;
}

/** The tree of `rev` with `patches` applied, in a fresh directory; Maven runs `classes` there. */
async function runAt(
  repoDir: string,
  rev: string,
  patches: string[],
  classes: string[],
  opts: { m2: string; javaHome?: string; offline: boolean; timeoutMs: number; edits: BuildEdit[]; args: string[] },
): Promise<RunResult> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-reconstruct-'));
  try {
    // A mirror without some large files (jackson-databind's old javadoc pages) still gives the rest.
    await extractTree(repoDir, rev, dir);
    for (const p of patches.filter(Boolean)) {
      const file = path.join(dir, '.benchgym.patch');
      await fs.writeFile(file, p);
      // Outside any repository (none above the temporary directory is looked for), as git over a workspace runs.
      const applied = await run('git', [...ISOLATED_GIT_FLAGS, 'apply', '--binary', '.benchgym.patch'], {
        cwd: dir,
        env: isolatedGitEnv(dir, { GIT_DIR: '/nonexistent' }),
      });
      await fs.rm(file);
      if (!applied.ok) throw new GymError('PATCH_APPLY_FAILED', `a patch does not apply at ${rev}: ${applied.out.slice(0, 2000)}`);
    }
    // The spec's build-setup edits (as validation commits them on top of the base), then the user's.
    for (const e of opts.edits) {
      const file = path.join(dir, e.file);
      const text = await fs.readFile(file, 'utf8').catch(() => null);
      if (text !== null) await fs.writeFile(file, text.split(e.find).join(e.replace));
    }
    const args = [
      '-B',
      ...(opts.offline ? ['-o'] : []),
      `-Dmaven.repo.local=${opts.m2}`,
      ...opts.args,
      '-Dmaven.test.failure.ignore=true',
      ...mavenTestSelection(classes),
      'test',
    ];
    const env = opts.javaHome
      ? { ...process.env, JAVA_HOME: opts.javaHome, PATH: `${path.join(opts.javaHome, 'bin')}:${process.env.PATH ?? ''}` }
      : process.env;
    const result = await run('mvn', args, { cwd: dir, env, timeoutMs: opts.timeoutMs });
    const tests = new Map<string, TestStatus>();
    const found = await run('find', ['.', '-path', '*/target/surefire-reports/TEST-*.xml', '-type', 'f'], { cwd: dir });
    for (const rel of found.out
      .split('\n')
      .map((l) => l.trim().replace(/^\.\//, ''))
      .filter(Boolean)) {
      const module = rel.replace(/\/?target\/surefire-reports\/TEST-[^/]*$/, '');
      for (const c of parseJUnitXml(await fs.readFile(path.join(dir, rel), 'utf8'))) {
        const id = `${module ? `${module}:` : ''}${junitTestId(c.attrs)}`;
        const prev = tests.get(id);
        // A test that ran more than once (a parameterised name, a rerun) counts as failed when any run failed.
        tests.set(id, prev && prev !== 'passed' ? prev : c.status);
      }
    }
    const compiled = !/COMPILATION ERROR|Compilation failure/.test(result.out);
    return { tests, log: `$ mvn ${args.join(' ')}\n${result.out}`, compiled };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * Each test class's outcome, by SWE-bench-java's rule for a listed class: passed when at least
 * one of its cases passed and none failed (nested classes count with their outer class).
 */
export function byClass(tests: Map<string, TestStatus>): Map<string, 'passed' | 'failed'> {
  const out = new Map<string, 'passed' | 'failed'>();
  const seen = new Map<string, { passed: boolean; failed: boolean }>();
  for (const [test, status] of tests) {
    const { module, cls: name } = javaTestClass(test);
    const cls = `${module ? `${module}:` : ''}${name}`;
    const s = seen.get(cls) ?? { passed: false, failed: false };
    if (status === 'passed') s.passed = true;
    else if (status !== 'skipped') s.failed = true;
    seen.set(cls, s);
  }
  for (const [cls, s] of seen) out.set(cls, s.passed && !s.failed ? 'passed' : 'failed');
  return out;
}

export interface ReconstructOptions {
  /** Text replacements in the root pom.xml of every run, after the spec's edits (e.g. a SNAPSHOT parent → its release). */
  pomEdits?: { find: string; replace: string }[];
  repoDir: string;
  /** `owner/name`. */
  repo: string;
  ids: string[];
  out: string;
  cacheDir: string;
  jdk?: string;
  timeoutMs?: number;
  onProgress?: (line: string) => void;
}

export interface ReconstructReport {
  written: { instance_id: string; method: Change['method']; seconds: number; f2p: number; p2p: number }[];
  failed: { instance_id: string; reason: string; seconds: number }[];
}

/** Reconstructs each id, appending its row to `out` (ids already there are skipped: resumable). */
export async function reconstruct(opts: ReconstructOptions): Promise<ReconstructReport> {
  const report: ReconstructReport = { written: [], failed: [] };
  const m2 = path.join(opts.cacheDir, 'm2');
  const jdk = chooseJdk(opts.jdk ?? '17', await installedJdks());
  const done = new Set<string>();
  if (existsSync(opts.out))
    for (const line of (await fs.readFile(opts.out, 'utf8')).split('\n'))
      if (line.trim()) done.add(String((JSON.parse(line) as { instance_id?: string }).instance_id));
  await fs.mkdir(path.dirname(path.resolve(opts.out)), { recursive: true });
  for (const id of opts.ids) {
    const started = Date.now();
    const seconds = () => Math.round((Date.now() - started) / 100) / 10;
    const fail = (reason: string) => {
      report.failed.push({ instance_id: id, reason, seconds: seconds() });
      opts.onProgress?.(`${id}: not reconstructed: ${reason}`);
    };
    if (done.has(id)) {
      opts.onProgress?.(`${id}: already in ${opts.out}`);
      continue;
    }
    const pr = Number(InstanceId.parse(id).slice(id.lastIndexOf('-') + 1));
    const change = await findChange(opts.repoDir, pr);
    if (!change) {
      fail(`no merge commit, squash commit or commit naming #${pr} in the history`);
      continue;
    }
    const split = await splitChange(opts.repoDir, change);
    const classes = await testClassesToRun(opts.repoDir, change.commit, split.testFiles);
    if (!split.patch || !split.testPatch || !classes.length) {
      fail(
        `${change.method} ${change.commit.slice(0, 10)} has ${split.patch ? '' : 'no fix, '}${split.testPatch ? '' : 'no test change, '}${classes.length ? '' : 'no test class'}`.replace(
          /, $/,
          '',
        ),
      );
      continue;
    }
    // The instance's spec (specs.ts: -D overrides, build-setup edits), as validation builds it.
    const spec = specFor(opts.repo, '', id);
    const edits: BuildEdit[] = [
      ...(spec.language === 'java' ? spec.edits : []),
      ...(opts.pomEdits ?? []).map((e) => ({ file: 'pom.xml', ...e })),
    ];
    const runOpts = {
      m2,
      ...(jdk ? { javaHome: jdk.home } : {}),
      timeoutMs: opts.timeoutMs ?? 30 * 60_000,
      edits,
      args: spec.language === 'java' ? spec.args : [],
    };
    // Offline first (the shared repository usually has it all); online once when something is missing.
    const runBoth = async (patches: string[]) => {
      let r = await runAt(opts.repoDir, change.base, patches, classes, { ...runOpts, offline: true });
      if (mavenResolutionFailed(r.log)) r = await runAt(opts.repoDir, change.base, patches, classes, { ...runOpts, offline: false });
      return r;
    };
    try {
      const before = await runBoth([split.testPatch]);
      const after = await runBoth([split.patch, split.testPatch]);
      if (!after.compiled || !after.tests.size) {
        fail(`the tests do not ${after.compiled ? 'run' : 'compile'} with the fix applied:\n${after.log.slice(-1500)}`);
        continue;
      }
      // Test classes, as SWE-bench-java and Multi-SWE-bench list Java tests (and as old Surefires
      // select them: 2.17 runs one of several `Class#method` of a class).
      const [classesBefore, classesAfter] = [byClass(before.tests), byClass(after.tests)];
      const f2p: string[] = [];
      const p2p: string[] = [];
      for (const [cls, status] of [...classesAfter].sort(([a], [b]) => a.localeCompare(b))) {
        if (status !== 'passed') continue;
        if (classesBefore.get(cls) === 'passed') p2p.push(cls);
        else f2p.push(cls);
      }
      if (!f2p.length) {
        fail(`no test class fails before the fix and passes after it (${after.tests.size} tests of ${classesAfter.size} classes ran)`);
        continue;
      }
      const title = change.method === 'merge-commit' ? change.message.split('\n').slice(1).join('\n').trim() : change.subject;
      const statement = change.method === 'merge-commit' ? `${title || change.subject}` : change.message;
      const row = {
        instance_id: id,
        repo: opts.repo,
        base_commit: change.base,
        patch: split.patch,
        test_patch: split.testPatch,
        problem_statement: statement || change.subject,
        hints_text: '',
        created_at: change.date,
        version: '',
        FAIL_TO_PASS: f2p,
        PASS_TO_PASS: p2p,
        environment_setup_commit: change.base,
        reconstructed: {
          method: change.method,
          change_commit: change.commit,
          problem_statement_source:
            change.method === 'merge-commit'
              ? 'the merge commit message (the PR title); the issue text is not in the history'
              : 'the commit message; the issue text is not in the history',
          before_compiled: before.compiled,
          ...(edits.length ? { build_edits: edits } : {}),
          ...(runOpts.args.length ? { build_args: runOpts.args } : {}),
          seconds: seconds(),
        },
      };
      await fs.appendFile(opts.out, JSON.stringify(row) + '\n');
      report.written.push({ instance_id: id, method: change.method, seconds: seconds(), f2p: f2p.length, p2p: p2p.length });
      opts.onProgress?.(
        `${id}: ${change.method} ${change.commit.slice(0, 10)}, ${f2p.length} fail-to-pass, ${p2p.length} pass-to-pass classes (${seconds()} s)`,
      );
    } catch (err) {
      fail((err as Error).message);
    }
  }
  return report;
}

const USAGE = `benchgym swebench-reconstruct: rebuilds SWE-bench-schema instances of a repository from its history
(for instances whose published records cannot be had): each pull request's change (merge commit, squash
commit '(#N)', or a commit naming '#N'), split into patch and test_patch (src/test/**), based on the change's
first parent; FAIL_TO_PASS / PASS_TO_PASS from running the touched test classes (when the change touches
only test helpers, the module's test classes that use them) with Maven before and after the fix; the
problem statement from the history (the PR title / commit message: the issue text is not there).
Rows are appended to --out (ids already there are skipped).

Usage:
  benchgym swebench-reconstruct --repo-dir MIRROR --repo owner/name --ids ID[,ID...] | --ids-file FILE
                 --out FILE.jsonl [--pom-edit FIND=REPLACE]... [--jdk 17] [--cache-dir DIR] [--json]

  --pom-edit F=R     replace F by R in the root pom.xml of every run, recorded in the row (a SNAPSHOT
                     parent only a snapshot repository has, e.g. 2.18.0-SNAPSHOT=2.18.0 for jackson-databind)

  --ids-file FILE    a JSON file: a list of ids, or an object keyed by id (reference/index.json); only
                     the ids of --repo are taken

Example:
  benchgym swebench-reconstruct --repo-dir MIRRORS/FasterXML+jackson-databind --repo fasterxml/jackson-databind \
    --ids-file DATA/swe-bench-java/reference/index.json --out OUT/jackson-databind.jsonl
`;

export const reconstructCommand: CliCommand = {
  name: 'swebench-reconstruct',
  summary: 'rebuild SWE-bench instances (patch, test patch, FAIL_TO_PASS, PASS_TO_PASS) from a repository history',
  usage: USAGE,
  async run(args) {
    const { values } = parseFlags(args, {
      'repo-dir': { type: 'string' },
      repo: { type: 'string' },
      ids: { type: 'string' },
      'ids-file': { type: 'string' },
      out: { type: 'string' },
      jdk: { type: 'string' },
      'cache-dir': { type: 'string' },
      'pom-edit': { type: 'string', multiple: true },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    const repoDir = values['repo-dir'];
    if (!repoDir || !existsSync(repoDir))
      throw new GymError('INVALID_ARGUMENT', `--repo-dir: ${repoDir ?? '(missing)'} is not a git repository here`);
    const repo = z
      .string()
      .regex(/^[\w.-]+\/[\w.-]+$/, "--repo: 'owner/name'")
      .parse(values.repo);
    if (!values.out) throw new GymError('INVALID_ARGUMENT', 'missing --out FILE.jsonl');
    const prefix = `${repo.replace('/', '__').toLowerCase()}-`;
    let ids = (values.ids ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (values['ids-file']) {
      const parsed = z
        .union([z.array(z.string()), z.record(z.string(), z.unknown())])
        .parse(JSON.parse(await fs.readFile(values['ids-file'], 'utf8')));
      ids.push(...(Array.isArray(parsed) ? parsed : Object.keys(parsed)));
    }
    ids = [...new Set(ids.filter((id) => id.toLowerCase().startsWith(prefix)))].map((id) => InstanceId.parse(id));
    if (!ids.length) throw new GymError('INVALID_ARGUMENT', `no instance ids of ${repo} (${prefix}<PR>) given`);
    const cacheDir = values['cache-dir'] ?? process.env.BENCHGYM_CACHE ?? defaultDataDir();
    const pomEdits = (values['pom-edit'] ?? []).map((e) => {
      const at = e.indexOf('=');
      if (at <= 0) throw new GymError('INVALID_ARGUMENT', `invalid --pom-edit '${e}': FIND=REPLACE`);
      return { find: e.slice(0, at), replace: e.slice(at + 1) };
    });
    const report = await reconstruct({
      repoDir,
      repo,
      ids,
      pomEdits,
      out: path.resolve(values.out),
      cacheDir,
      ...(values.jdk ? { jdk: values.jdk } : {}),
      onProgress: values.json ? undefined : (l) => process.stderr.write(`${l}\n`),
    });
    if (values.json) process.stdout.write(JSON.stringify(report, null, 1) + '\n');
    else process.stdout.write(`${report.written.length} written, ${report.failed.length} not reconstructed\n`);
    return report.written.length ? 0 : 1;
  },
};
