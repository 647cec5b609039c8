import { randomBytes } from 'node:crypto';
import { NOTE_CODES } from '../../src/scoring/note_codes.ts';
import { GymError } from '../../src/errors.ts';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { matchesAny } from '../../src/sandbox/glob.ts';
import { shellQuote } from '../../src/shell_quote.ts';
import { killedByMemoryLimit, OOM_KILLED_NOTE } from '../../src/sandbox/memory_limit.ts';
import { runTests, type TestRun } from '../../src/scoring/runners.ts';
import {
  scoreInFreshSandbox,
  type ScoreDeps,
  type ScoreOptions,
  type ScoringRun,
  type ScoringSteps,
  type VerdictBody,
} from '../../src/scoring/pipeline.ts';
import { clearForHarness, refusedNote } from '../../src/scoring/candidate_files.ts';
import { javaGuardFor } from '../../src/scoring/java_guard.ts';
import { isolatedGitShell } from '../../src/sandbox/git_isolation.ts';
import type { TestCaseResult } from '../../src/scoring/junit.ts';
import type { Outcome, Verdict } from '../../src/scoring/verdict.ts';
import type { RunnerSpec, Task } from '../../src/tasks/schema.ts';
import { parseJavaTestId, qualifyJavaTests } from '../../src/tasks/java_tests.ts';
import { mavenResolutionLine } from '../../src/env/maven.ts';
import { ENV_INCOMPLETE_NOTE } from '../../src/scoring/env_incomplete.ts';
import { diffFiles, SWEBENCH_PATCH_CHAIN } from './patches.ts';
import { isBuildFile, isTestInfraFile, testConfigLines } from './tamper.ts';

export interface SwebenchScoreOptions {
  /** Globs of a Python instance's test files (the spec's); Java's are the build's test roots. */
  testFiles: string[];
}

/** The note of the candidate's test files kept in faithful scoring (strict would set them aside: the modes may differ). */
export const TEST_FILES_KEPT = 'CANDIDATE_TEST_FILES_KEPT';
/** The note of the candidate's test files set aside in strict scoring (faithful keeps them: the modes may differ). */
export const TEST_FILES_SET_ASIDE = 'CANDIDATE_TEST_FILES_SET_ASIDE';
/** The note of a kept test file of the candidate's that does not compile (src/scoring/note_codes.ts of the replay). */
export const TEST_COMPILE_FAILED = NOTE_CODES.testCompileFailed;

/**
 * Scores a candidate patch for a SWE-bench instance in a fresh sandbox, step by step as the
 * paper's harness does ("an issue is considered resolved only if all given test cases
 * pass"), without its known holes:
 *
 * 1. apply the patch (`git apply` → `--3way` → `patch --fuzz=5`, reset between tries);
 * 2. Java: the build guard (src/scoring/java_guard.ts) puts the start state's build
 *    configuration back, then the task's declared build changes (the gold patch's); files
 *    that would reach the compiler or the test toolchain rather than the code under test are
 *    removed (strict: refused, reward 0). Then the candidate's changes to test files are
 *    undone (Python: to its test infrastructure and pytest configuration too), each noted;
 * 3. reset every file the test patch touches to its base version, delete the files it
 *    adds (a candidate may have put its own there), apply the test patch;
 * 4. run the FAIL_TO_PASS and PASS_TO_PASS tests in one build (`--fail-at-end`, skipping and
 *    ignored failures switched off, the tests in a forked JVM), with earlier reports removed
 *    and a run id the reports must carry;
 * 5. resolved iff every FAIL_TO_PASS and PASS_TO_PASS test passed in this run's reports and
 *    the build agrees (exit code 0: Maven fails the build on any failing test).
 *
 * Every git here runs isolated (git_isolation.ts): no hook, fsmonitor or config of the
 * workspace's plays a part.
 */
export function scoreSwebench(
  task: Task,
  patch: string,
  deps: ScoreDeps,
  opts: ScoreOptions & Partial<SwebenchScoreOptions> = {},
): Promise<Verdict> {
  return scoreInFreshSandbox(task, patch, deps, opts, (t) => swebenchSteps(t, opts));
}

/** The steps of SWE-bench's evaluation, in the pipeline's order. */
function swebenchSteps(task: Task, opts: ScoreOptions & Partial<SwebenchScoreOptions>): ScoringSteps {
  const testPatch = task.tests.hidden.patch;
  if (!testPatch) throw new GymError('TASK_INVALID', `task '${task.id}' has no test patch`);
  const runId = randomBytes(8).toString('hex');
  const runner = withRunId(task.tests.hidden.runner, runId);
  const testGlobs = opts.testFiles ?? task.tests.testFiles;
  const strict = (opts.scoring ?? 'strict') === 'strict';
  const guard = javaGuardFor(task, runner, { strict, testFiles: testGlobs, ...(opts.signal ? { signal: opts.signal } : {}) });
  const testPatchPaths = new Set(
    diffFiles(testPatch)
      .flatMap((f) => [f.oldPath, f.newPath])
      .filter((p): p is string => Boolean(p)),
  );
  // The candidate's test files that stay (faithful Java): a compile error in one of them is named.
  const keptTestFiles: string[] = [];
  return {
    // 1. The candidate patch.
    patch: {
      chain: SWEBENCH_PATCH_CHAIN,
      resetBetweenTries: true,
      failedNote: 'PATCH_APPLY_FAILED: the patch does not apply to the base commit (git apply, git apply --3way, patch --fuzz=5)',
      noteFallback: true,
    },
    running: 'running FAIL_TO_PASS and PASS_TO_PASS',

    async readStartState({ sandbox, log }) {
      const command = `${GIT} rev-parse HEAD && ${GIT} status --porcelain --untracked-files=all | head -5`;
      const head = await sandbox.exec(command, { timeoutMs: 300_000, signal: opts.signal });
      if (head.exitCode !== 0) throw new GymError('ENV_BUILD_FAILED', `the start state is not a git work tree: ${head.stderr.trim()}`);
      log.push(`start state: ${head.stdout.trim()}`);
      await guard?.readStartState(sandbox, log);
    },

    async layDownTests(run) {
      if (guard) {
        await guard.enforce(run.sandbox, run.notes, run.log, task.tests.hidden.buildPatch);
        const tamper = guard.tamperNote();
        // Strict: refused files make the verdict; nothing of theirs is run.
        if (tamper) throw new GymError('INVALID_ARGUMENT', tamper, { candidate: true, note: tamper });
      }
      const startLinks = await trackedLinks(run.sandbox);
      const isTestFile = guard ? (rel: string) => guard.isTestFile(rel) : (rel: string) => matchesAny(rel, testGlobs);
      await keepTestFiles(run, isTestFile, testPatchPaths, startLinks, task.language, keptTestFiles);
      await applyTestPatch(run, testPatch, startLinks);
    },

    // 4. FAIL_TO_PASS and PASS_TO_PASS, this run's reports only.
    async runTests({ sandbox, env, notes, log }) {
      const spec = await locateModules(sandbox, runner, log);
      const run = await runTests(sandbox, env, guard ? guard.runner(spec) : spec, {
        timeoutMs: task.tests.hidden.timeoutMs,
        signal: opts.signal,
        ...(guard ? { appendEnv: guard.runEnv(spec) } : {}),
      });
      // Said in the verdict: unresolved for a candidate (its code outgrew the task's memory), an
      // infrastructure error for validate's gold run (src/scoring/validate.ts).
      if (killedByMemoryLimit(run.exec)) notes.push(memoryLimitNote(task, run));
      // An artifact the offline run could not resolve is missing from the env (a warm-up that never
      // reached that module, a dependency a patch adds): said, and for the gold validate's error.
      const missing = runner.type === 'maven' ? mavenResolutionLine(run.log) : undefined;
      if (missing)
        notes.push(`${ENV_INCOMPLETE_NOTE}: the offline test run could not resolve what it needs from the env: ${missing.slice(0, 600)}`);
      const compile = testCompileNote(run.log, keptTestFiles);
      if (compile) notes.push(compile);
      if (runner.type === 'maven' && runner.exclude?.length)
        notes.push(`not run here, as the spec says (${String(task.metadata.spec_note ?? 'no note')}): ${runner.exclude.join(', ')}`);
      return run;
    },

    // 5. Resolved iff every given test passed.
    async decide({ sandbox, notes }, run) {
      const tests = await ownReports(sandbox, run, runId, runner, notes);
      return decideSwebench({ ...run, tests }, task.tests, notes, task.language);
    },
  };
}

/**
 * Maven tests named by their class alone get the module whose test sources declare it (the
 * sources as the harness left them: base, test patch, the candidate's test edits undone), so a
 * multi-module project builds those modules (`-pl ... -am`) and not the whole reactor; a class
 * found in no module or in several keeps the whole reactor, as the harness runs it.
 */
async function locateModules(sandbox: Sandbox, runner: RunnerSpec, log: string[]): Promise<RunnerSpec> {
  if (runner.type !== 'maven' || runner.tests.every((t) => parseJavaTestId(t).module)) return runner;
  const found = await sandbox.exec(
    "find . \\( -name .git -o -name target -o -name node_modules \\) -prune -o -path '*/src/test/java/*.java' -type f -print",
    { timeoutMs: 120_000, maxOutputBytes: 16 * 1024 * 1024 },
  );
  if (found.exitCode !== 0 || found.truncated.stdout > 0) return runner;
  const tests = qualifyJavaTests(runner.tests, found.stdout.split('\n').filter(Boolean));
  const modules = [...new Set(tests.map((t) => parseJavaTestId(t).module).filter(Boolean))];
  if (modules.length)
    log.push(
      `tests located in module(s) ${modules.join(', ')}` +
        `${tests.every((t) => parseJavaTestId(t).module) ? '' : ' (some not: the whole reactor runs)'}`,
    );
  return { ...runner, tests };
}

/**
 * The sandbox's memory limit killed the test run (Maven, or its Surefire fork): the note says which limit, and what the log showed of it.
 */
function memoryLimitNote(task: Task, run: TestRun): string {
  const limit = task.resources.memoryMb
    ? `the task asks for ${task.resources.memoryMb} MiB; the sandbox had max(that, the server's limit)`
    : "the server's default limit";
  const tail = killLines(run.log);
  return (
    `${OOM_KILLED_NOTE}: the test run was killed by the sandbox's memory ` +
    `limit (${limit}; exit ${run.exec.exitCode})${tail ? `: ${tail}` : ''}`
  );
}

/**
 * The last lines of a log that tell of a kill, each clipped: the shell's "Killed" line repeats
 * the whole command, which for a run of 2,700 listed classes is 100 KB a verdict should not carry.
 */
export function killLines(log: string, max = 240): string {
  return log
    .split('\n')
    .filter((l) => /Killed|terminated without|exit code 137|OutOfMemory|memory limit/i.test(l))
    .slice(-3)
    .map((l) => (l.length > max ? `${l.slice(0, max)}… (${l.length - max} more characters)` : l))
    .join(' | ');
}

/** git in the scoring sandbox, taking no orders from the workspace (its hooks, config, attributes). */
const GIT = isolatedGitShell();

/** A shell command in the scoring sandbox, with the scoring's signal. */
function shell(run: ScoringRun): (command: string, stdin?: string) => ReturnType<Sandbox['exec']> {
  return (command, stdin) =>
    run.sandbox.exec(command, { timeoutMs: 300_000, signal: run.opts.signal, ...(stdin !== undefined ? { stdin } : {}) });
}

/**
 * 2. The candidate's test files. Those the test patch touches are reset by it (step 3), as the
 * harness resets them. The others: faithful scoring keeps them, as the harness leaves them
 * (model patch, then test patch, then the build: one that does not compile fails the build);
 * strict scoring sets them aside (they are not the code under test) and says so. Java's test
 * files are told by the build's test roots (the guard's `isTestFile`), Python's by the spec's
 * globs; Python instances also get pytest's infrastructure (conftest.py, pytest.ini, tox.ini)
 * and build-file changes that configure pytest reverted.
 */
async function keepTestFiles(
  run: ScoringRun,
  isTestFile: (rel: string) => boolean,
  testPatchPaths: ReadonlySet<string>,
  startLinks: Map<string, string>,
  language: 'java' | 'python',
  kept: string[],
): Promise<void> {
  const { sandbox, notes } = run;
  const sh = shell(run);
  const strict = (run.opts.scoring ?? 'strict') === 'strict';
  const changed = await changedPaths(sandbox);
  const undo: string[] = [];
  const setAside: string[] = [];
  for (const c of changed) {
    if (isTestFile(c.path)) {
      // The test patch's own files are reset and laid down by it (step 3), in both modes.
      if (testPatchPaths.has(c.path)) notes.push(`test file reset to its base version: ${c.path}`);
      else if (language === 'java' && !strict) kept.push(c.path);
      else (undo.push(c.path), language === 'java' ? setAside.push(c.path) : notes.push(`test file reset to its base version: ${c.path}`));
    } else if (language === 'python' && isTestInfraFile(c.path)) {
      undo.push(c.path);
      notes.push(`TEST_INFRA_TAMPERING neutralised: ${c.path} reset to its base version`);
    } else if (language === 'python' && isBuildFile(c.path) && c.tracked) {
      const diff = await sh(`${GIT} diff HEAD -- ${shellQuote(c.path)}`);
      const lines = testConfigLines(diff.stdout);
      if (lines.length) {
        undo.push(c.path);
        notes.push(
          `TEST_INFRA_TAMPERING neutralised: ${c.path} reverted (a build-file ` +
            `change that configures tests: ${lines.slice(0, 3).join(' | ')})`,
        );
      }
    }
  }
  if (kept.length)
    notes.push(
      `${TEST_FILES_KEPT}: ${kept.length} test file(s) of the candidate's that the test patch does not ` +
        `overwrite stay, as the harness leaves them (strict scoring sets them aside): ${listed(kept)}`,
    );
  if (setAside.length)
    notes.push(
      `${TEST_FILES_SET_ASIDE}: ${setAside.length} test file(s) of the candidate's that the test patch does not overwrite ` +
        `are set aside (not the code under test; the harness keeps them, and so does faithful scoring): ${listed(setAside)}`,
    );
  if (!undo.length) return;
  notes.push(...(await clearForHarness(sandbox, undo, { startLinks, signal: run.opts.signal })).map(refusedNote));
  await restore(sh, undo, changed);
}

const listed = (paths: string[], max = 10) =>
  paths.slice(0, max).join(', ') + (paths.length > max ? `, and ${paths.length - max} more` : '');

/**
 * The test-compile errors of a run in the candidate's kept test files (Maven's `[ERROR] /path/File.java:[l,c] msg`, javac's
 * `/path/File.java:l: error: msg`): the note that says the candidate's own test file broke the build, as the harness's build broke.
 */
export function testCompileNote(log: string, kept: readonly string[]): string | undefined {
  if (!kept.length) return undefined;
  const errors: string[] = [];
  for (const line of log.split('\n')) {
    const m = /^(?:\[ERROR\]\s+)?(\/?\S+?\.(?:java|kt|groovy|scala))(?::\[(\d+),\d+\]|:(\d+):\s*error:)\s*(.*)$/.exec(line.trim());
    if (!m) continue;
    const file = kept.find((k) => m[1] === k || m[1]!.endsWith(`/${k}`));
    if (file) errors.push(`${file}:${m[2] ?? m[3]}: ${m[4]!.slice(0, 200)}`);
  }
  if (!errors.length) return undefined;
  return (
    `${TEST_COMPILE_FAILED}: a test file of the candidate's (kept, as the harness keeps it) does not ` +
    `compile, so the build fails as the harness's does: ${[...new Set(errors)].slice(0, 5).join(' | ')}`
  );
}

/** 3. The test patch, on a clean slate for every file it touches (a file it adds may be the candidate's own). */
async function applyTestPatch(run: ScoringRun, testPatch: string, startLinks: Map<string, string>): Promise<void> {
  const { sandbox, notes, log } = run;
  const sh = shell(run);
  const touched = diffFiles(testPatch);
  const resetPaths = [...new Set(touched.flatMap((f) => [f.oldPath, f.newPath]).filter((p): p is string => Boolean(p)))];
  notes.push(...(await clearForHarness(sandbox, resetPaths, { startLinks, signal: run.opts.signal })).map(refusedNote));
  const reset = await sh(
    resetPaths
      .map((p) => {
        const q = shellQuote(p);
        return `if ${GIT} cat-file -e HEAD:${q} 2>/dev/null; then rm -rf -- ${q}; ${GIT} checkout -q HEAD -- ${q}; else rm -rf -- ${q}; fi`;
      })
      .join('\n') + '\ntrue',
  );
  log.push(`reset ${resetPaths.length} test-patch file(s): exit ${reset.exitCode} ${reset.stderr}`);
  const tp = await sh(`p=$(mktemp); cat > "$p"; ${GIT} apply --verbose --whitespace=nowarn "$p" 2>&1`, testPatch);
  log.push(`test patch:\n${tp.stdout}`);
  if (tp.exitCode !== 0) throw new GymError('TASK_INVALID', `the test patch does not apply to the base commit:\n${tp.stdout.slice(-2000)}`);
}

/**
 * Applies a candidate patch in the sandbox's git work tree with the harness's fallbacks
 * (`git apply`, `git apply --3way`, `patch --fuzz=5`), the tree reset between tries and
 * after a last failure. `method` is the one that applied, `empty`, or `none`.
 */
export async function applyCandidatePatch(sandbox: Sandbox, patch: string): Promise<{ method: string; log: string }> {
  const r = await sandbox.applyPatch(patch, { chain: SWEBENCH_PATCH_CHAIN, resetBetweenTries: true });
  return { method: r.ok ? (r.method ?? 'empty') : 'none', log: r.log };
}

/** Paths that differ from HEAD (tracked changes, deletions, untracked files), NUL-safe. */
async function changedPaths(sandbox: Sandbox): Promise<{ path: string; tracked: boolean }[]> {
  // --ignored: a patch that also edits .gitignore cannot hide the files it adds.
  const status = `${GIT} status --porcelain=v1 -z --untracked-files=all --ignored=matching --no-renames`;
  const r = await sandbox.exec(status, { timeoutMs: 120_000 });
  if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `git status failed in the scoring sandbox: ${r.stderr}`);
  return r.stdout
    .split('\0')
    .filter(Boolean)
    .map((entry) => ({ path: entry.slice(3), tracked: !entry.startsWith('??') && !entry.startsWith('!!') }));
}

/** The symbolic links the base commit tracks (path → target): the start state's own, left in place. */
async function trackedLinks(sandbox: Sandbox): Promise<Map<string, string>> {
  const links =
    `${GIT} ls-files -s -z | while IFS= read -r -d '' e; do case "$e" in 120000\\ *) s=\${e#120000 }; ` +
    `printf '%s\\0' "\${e#*$'\\t'}"; ${GIT} cat-file blob "\${s%% *}"; printf '\\0';; esac; done; true`;
  const r = await sandbox.exec(links, { timeoutMs: 120_000 });
  if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `listing the base commit's symbolic links failed: ${r.stderr}`);
  const fields = r.stdout.split('\0');
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) out.set(fields[i]!, fields[i + 1]!);
  return out;
}

async function restore(
  sh: (c: string) => Promise<{ exitCode: number | null; stderr: string }>,
  paths: string[],
  changed: { path: string; tracked: boolean }[],
): Promise<void> {
  const tracked = new Map(changed.map((c) => [c.path, c.tracked]));
  const script = paths
    .map((p) => (tracked.get(p) ? `rm -rf -- ${shellQuote(p)}; ${GIT} checkout -q HEAD -- ${shellQuote(p)}` : `rm -rf -- ${shellQuote(p)}`))
    .join('\n');
  const r = await sh(`${script}\ntrue`);
  if (r.exitCode !== 0) throw new GymError('SANDBOX_UNAVAILABLE', `could not restore test files: ${r.stderr}`);
}

/**
 * The scoring run's arguments: the run id the reports must carry; test skipping and ignored
 * failures switched off wherever a property decides them; `--fail-at-end`, so modules that
 * do not depend on a failing one still run. A failing test then fails the build, and the exit
 * code, computed by Maven from the test events and not from files in the workspace, can
 * check the reports.
 */
function withRunId(spec: RunnerSpec, runId: string): RunnerSpec {
  if (spec.type === 'maven') {
    const strict = ['-DskipTests=false', '-Dmaven.test.skip=false', '-Dmaven.test.failure.ignore=false', '-DtestFailureIgnore=false'];
    return { ...spec, args: [...spec.args, ...strict, `-Dbenchgym.run=${runId}`, '--fail-at-end'] };
  }
  if (spec.type === 'gradle') return { ...spec, args: [...spec.args, '--continue'] };
  return spec;
}

/**
 * Keeps the results of reports written by this run: Surefire records the command line's
 * properties in every report, so each must carry the run id. Reports without it (written
 * by code under test, say) are dropped and noted. A Surefire that records no properties at
 * all leaves every report without the id: then the reports are kept (they were removed
 * before the run, so they are still this run's) and that is noted.
 */
async function ownReports(sandbox: Sandbox, run: TestRun, runId: string, spec: RunnerSpec, notes: string[]): Promise<TestCaseResult[]> {
  if (spec.type !== 'maven' || !run.reports?.length) return run.tests;
  const foreign: string[] = [];
  for (const rel of run.reports) {
    const xml = (await sandbox.readFile(rel).catch(() => Buffer.from(''))).toString('utf8');
    if (!xml.includes(runId)) foreign.push(rel);
  }
  if (!foreign.length) return run.tests;
  if (foreign.length === run.reports.length) {
    notes.push('the reports carry no run id (this Surefire records no properties); reports removed before the run were relied on');
    return run.tests;
  }
  notes.push(`REPORT_TAMPERING: ${foreign.length} report(s) not written by this run were ignored: ${foreign.slice(0, 5).join(', ')}`);
  const moduleOf = (rel: string) => rel.replace(/\/?target\/surefire-reports\/TEST-[^/]*$/, '');
  const dropped = new Set(foreign.map((rel) => `${moduleOf(rel)}|${rel.slice(rel.lastIndexOf('/TEST-') + 6, -4)}`));
  return run.tests.filter((t) => {
    const { module, pattern } = parseJavaTestId(t.name);
    return !dropped.has(`${module ?? ''}|${pattern.split('#')[0]}`);
  });
}

/**
 * True when result `name` is covered by listed id `id`. Java: `[module:]Class#method` by
 * `[module:]Class[#method]` (nested classes and parameterised methods included). Python: a
 * pytest node id by itself, or by a prefix ending at `::` or `[` (a file, a class, a
 * parametrised function).
 */
export function covers(id: string, name: string, language: 'java' | 'python' = 'java'): boolean {
  if (language === 'python') return name === id || name.startsWith(`${id}::`) || name.startsWith(`${id}[`);
  const want = parseJavaTestId(id);
  const got = parseJavaTestId(name);
  if (want.module && want.module !== got.module) return false;
  // Multi-SWE-bench names Gradle modules' whole test tasks (`jib-cli:test`): every test of the module.
  if (want.module && want.pattern === 'test') return true;
  const [wc, wm] = want.pattern.split('#') as [string, string | undefined];
  const [gc, gm] = got.pattern.split('#') as [string, string | undefined];
  if (gc !== wc && !gc.startsWith(`${wc}$`)) return false;
  if (!wm) return true;
  return gm === wm || (gm !== undefined && (gm.startsWith(`${wm}[`) || gm.startsWith(`${wm}(`)));
}

/**
 * SWE-bench's rule on this run's results: a listed test (a class or a method) passes when
 * at least one of its test cases passed and none failed; one that did not run fails.
 * Resolved iff every FAIL_TO_PASS and PASS_TO_PASS test passes, and then the build must
 * have exited 0 as well: a passing report from a failing build is not believed (a test
 * failed that the reports do not show, or a module did not build).
 */
export function decideSwebench(
  run: TestRun,
  lists: { failToPass: string[]; passToPass: string[] },
  notes: string[],
  language: 'java' | 'python' = 'java',
): VerdictBody {
  const outcome = (ids: string[]): Outcome => {
    const passed: string[] = [];
    const failed: string[] = [];
    for (const id of ids) {
      const cases = run.tests.filter((t) => covers(id, t.name, language));
      const ok = cases.some((t) => t.status === 'passed') && cases.every((t) => t.status === 'passed' || t.status === 'skipped');
      (ok ? passed : failed).push(id);
    }
    return { passed, failed };
  };
  const out = [...notes];
  const f2p = outcome(lists.failToPass);
  const p2p = outcome(lists.passToPass);
  const notRun = [...f2p.failed, ...p2p.failed].filter((id) => !run.tests.some((t) => covers(id, t.name, language)));
  if (notRun.length) out.push(`did not run (no report): ${notRun.slice(0, 10).join(', ')}`);
  if (run.exec.timedOut) out.push('the test run hit its time limit: counted against the solution');
  let resolved = f2p.failed.length === 0 && p2p.failed.length === 0 && !run.exec.timedOut;
  if (resolved && run.exec.exitCode !== 0) {
    resolved = false;
    out.push(`EXIT_CODE_MISMATCH: every listed test passed in the reports but the build exited ${run.exec.exitCode}`);
  }
  return {
    reward: resolved ? 1 : 0,
    status: resolved ? 'passed' : 'failed',
    tests: run.tests,
    failToPass: f2p,
    passToPass: p2p,
    notes: out,
    exitCode: run.exec.exitCode,
    timedOut: run.exec.timedOut,
  };
}
