import type { DirEntry, Sandbox } from '../sandbox/types.ts';
import { matchesAny } from '../sandbox/glob.ts';
import { GymError, toGymError } from '../errors.ts';
import type { Task } from '../tasks/schema.ts';
import { clearForHarness, readLinks, REFUSED, refusedNote } from './candidate_files.ts';
import { collectPytestIds, runTests } from './runners.ts';
import { decide, type Verdict } from './verdict.ts';
import { TAMPER } from './mode.ts';
import { scoreInFreshSandbox, type ScoreDeps, type ScoreOptions, type ScoringRun, type ScoringSteps } from './pipeline.ts';
import { REMOVE_BYTECODE, pytestEntryPoints, pytestFindings, scriptFindings, stripCompiled } from './strict.ts';
import { javaGuardFor } from './java_guard.ts';
import { javaTestClass, MAX_SELECTION_CHARS, mavenTestSelection } from '../tasks/java_tests.ts';
import type { RunnerSpec } from '../tasks/schema.ts';

export type { ScoreDeps, ScoreOptions } from './pipeline.ts';

/** Files every pytest task resets: they could otherwise rewrite how tests run. */
const ALWAYS_RESET_PYTHON = ['**/conftest.py', 'pytest.ini', 'tox.ini'];

/**
 * Does the hidden test run pytest (so that conftest.py and pytest.ini decide how
 * it runs)? A task whose answer is a conftest.py function runs a plain script.
 */
function runsPytest(task: Task): boolean {
  const runner = task.tests.hidden.runner;
  return runner.type === 'pytest' || (runner.type === 'script' && /pytest/.test(runner.command));
}

/**
 * Scores a patch the way the benchmarks do: a fresh sandbox from the untouched start state,
 * the patch applied, the task's test files reset, the hidden tests added, the hidden tests
 * run, reports parsed, a verdict. The episode's own sandbox is never reused, so nothing the
 * agent left running or cached can influence it.
 */
export function scorePatch(task: Task, patch: string, deps: ScoreDeps, opts: ScoreOptions = {}): Promise<Verdict> {
  return scoreInFreshSandbox(task, patch, deps, opts, hiddenTestSteps);
}

/**
 * The generic harness: the task's test files reset by snapshot, its hidden files laid
 * down, its hidden runner run, decided by `decide()`; strict mode's checks around it.
 */
function hiddenTestSteps(task: Task, opts: ScoreOptions): ScoringSteps {
  const testGlobs = [...task.tests.testFiles, ...(task.language === 'python' && runsPytest(task) ? ALWAYS_RESET_PYTHON : [])];
  const strict = (opts.scoring ?? 'strict') === 'strict';
  const tamper: string[] = [];
  let originalTests: StartState = { files: new Map(), links: new Map() };
  let pristineConfig: { name: string; content: string } | undefined;
  let pytestConfig: string | undefined;
  let expectedIds: string[] | undefined;
  const runner = task.tests.hidden.runner;
  const guard = javaGuardFor(task, runner, { strict, testFiles: testGlobs, ...(opts.signal ? { signal: opts.signal } : {}) });
  // Strict Java: the run is the listed tests, so the build's own exit code can check the reports.
  const listed = guard && strict ? listedRun(runner, task.tests) : undefined;
  return {
    patch: { failedNote: 'PATCH_APPLY_FAILED: the patch does not apply to the start state' },
    running: 'running the hidden tests',

    async readStartState(run) {
      const { sandbox, log } = run;
      originalTests = await snapshotMatching(sandbox, testGlobs, opts.signal);
      pristineConfig = task.tests.hidden.runner.type === 'pytest' ? await pytestConfigOf(sandbox) : undefined;
      log.push(`scoring: ${strict ? 'strict' : 'faithful'}`);
      await guard?.readStartState(sandbox, log);
      if (!strict || task.language !== 'python') return;
      // Bytecode or an extension module in the diff would run instead of the source it shows.
      const stripped = stripCompiled(run.patch);
      if (stripped.removed.length) {
        run.patch = stripped.patch;
        tamper.push(
          `compiled Python files (bytecode, extension modules) in the patch, removed: ${stripped.removed.slice(0, 5).join(', ')}`,
        );
      }
      const plugins = pytestEntryPoints(run.patch);
      if (plugins.length)
        tamper.push(`the patch declares a pytest plugin entry point (not loaded: autoloading is off): ${plugins.slice(0, 5).join(', ')}`);
      if (pristineConfig && !task.tests.failToPass.length && !task.tests.passToPass.length) {
        expectedIds = await collectInStartState(run, pristineConfig);
        log.push(`hidden tests collected in the start state: ${expectedIds ? expectedIds.length : 'none (collection fails there)'}`);
      }
    },

    async layDownTests({ sandbox, notes, log }) {
      if (guard) {
        await guard.enforce(sandbox, notes, log);
        const tamper = guard.tamperNote();
        // Strict: refused files make the verdict; nothing of theirs is run.
        if (tamper) throw new GymError('INVALID_ARGUMENT', tamper, { candidate: true, note: tamper });
      }
      for (const reset of await resetTestFiles(sandbox, testGlobs, originalTests, notes, opts.signal))
        notes.push(`test file reset to its start state: ${reset}`);
      const harnessFiles: Record<string, string> = { ...task.tests.hidden.files };
      if (pristineConfig) {
        // pytest reads its configuration as it was at the start: a patch that adds addopts or
        // plugins to pyproject.toml / setup.cfg changes the code, not how it is tested.
        pytestConfig = pristinePath(pristineConfig);
        harnessFiles[pytestConfig] = pristineConfig.content;
      }
      notes.push(
        ...(await clearForHarness(sandbox, Object.keys(harnessFiles), { startLinks: originalTests.links, signal: opts.signal })).map(
          refusedNote,
        ),
      );
      for (const [rel, content] of Object.entries(harnessFiles)) await sandbox.writeFile(rel, content);
    },

    async runTests({ sandbox, env, log }) {
      if (strict && task.language === 'python') await sandbox.exec(REMOVE_BYTECODE, { timeoutMs: 60_000 });
      const spec = guard ? guard.runner(listed?.runner ?? runner) : runner;
      if (listed?.runner) log.push("strict: the listed tests' classes run, and the build must agree with their reports");
      else if (listed) {
        log.push(
          "strict: the listed tests' classes are too many for one selection: the task's runner runs them, and the exit code is not checked",
        );
      }
      return runTests(sandbox, env, spec, {
        timeoutMs: task.tests.hidden.timeoutMs,
        signal: opts.signal,
        pytestConfig,
        scoring: strict ? 'strict' : 'faithful',
        ...(guard ? { appendEnv: guard.runEnv(spec) } : {}),
      });
    },

    decide({ notes, log }, run) {
      const decided = decide(run, { ...task.tests, passWhen: task.tests.hidden.passWhen }, notes);
      if (listed?.runner && decided.reward === 1 && run.exec.exitCode !== 0) {
        const exit = run.exec.exitCode;
        const note = `EXIT_CODE_MISMATCH: every listed test passed in the reports but the build of their classes exited ${exit}`;
        return { ...decided, reward: 0, status: 'failed', notes: [...decided.notes, note] };
      }
      if (strict) {
        if (run.strict && decided.reward === 1) tamper.push(...pytestFindings(run, run.strict, expectedIds));
        if (task.tests.hidden.runner.type === 'script') tamper.push(...scriptFindings(run));
        if (run.strict?.record?.notes.length) decided.notes.push(...run.strict.record.notes);
      }
      if (!tamper.length) return decided;
      log.push(...tamper.map((t) => `${TAMPER}: ${t}`));
      return { ...decided, reward: 0, status: 'failed', notes: [...decided.notes, ...tamper.map((t) => `${TAMPER}: ${t}`)] };
    },
  };
}

/**
 * The task's Java runner limited to the classes of its FAIL_TO_PASS and PASS_TO_PASS tests (by
 * class: Surefire before 2.19 cannot select several `Class#method` patterns at once), when it
 * has such lists and their selection fits one argument; `runner` undefined when it does not
 * (the task's runner then runs as it is).
 */
function listedRun(runner: RunnerSpec, lists: { failToPass: string[]; passToPass: string[] }): { runner?: RunnerSpec } | undefined {
  if ((runner.type !== 'maven' && runner.type !== 'gradle') || (!lists.failToPass.length && !lists.passToPass.length)) return undefined;
  const classes = [
    ...new Set(
      [...lists.failToPass, ...lists.passToPass].map((id) => {
        const { module, cls } = javaTestClass(id);
        return module ? `${module}:${cls}` : cls;
      }),
    ),
  ];
  if (mavenTestSelection(classes).some((a) => a.length > MAX_SELECTION_CHARS)) return {};
  return { runner: { ...runner, tests: classes } };
}

/**
 * Where the start state's pytest configuration is laid down for the run: beside the original,
 * in the workspace's root, since pytest resolves a configuration's relative paths
 * (`pythonpath = ["src"]`, `testpaths`) from the folder of the file it reads; the name keeps
 * the original's suffix, which tells pytest how to read it (.toml, .cfg, .ini).
 */
const pristinePath = (config: { name: string }) => `.benchgym-pristine-${config.name}`;

/**
 * The ids pytest collects from the hidden tests in the start state (before the patch), with
 * the start state's configuration; the hidden files and the configuration copy are then
 * taken away again so the patch applies to the start state as it was.
 */
async function collectInStartState(
  { sandbox, env, task, opts }: ScoringRun,
  config: { name: string; content: string },
): Promise<string[] | undefined> {
  const hidden = Object.entries(task.tests.hidden.files);
  const before = new Map<string, Buffer | null>();
  for (const [rel] of hidden) before.set(rel, (await sandbox.stat(rel))?.type === 'file' ? await sandbox.readFile(rel) : null);
  try {
    for (const [rel, content] of hidden) await sandbox.writeFile(rel, content);
    const pytestConfig = pristinePath(config);
    await sandbox.writeFile(pytestConfig, config.content);
    return await collectPytestIds(sandbox, env, task.tests.hidden.runner, {
      timeoutMs: task.tests.hidden.timeoutMs,
      signal: opts.signal,
      pytestConfig,
    });
  } finally {
    for (const [rel, content] of before) await (content ? sandbox.writeFile(rel, content) : sandbox.remove(rel)).catch(() => {});
    await sandbox.remove(pristinePath(config)).catch(() => {});
    await sandbox.exec(REMOVE_BYTECODE, { timeoutMs: 60_000 });
  }
}

/**
 * The configuration file pytest would use in the start state, by pytest's own precedence
 * (pytest.ini, .pytest.ini, pyproject.toml with [tool.pytest.ini_options], tox.ini with
 * [pytest], setup.cfg with [tool:pytest]); an empty pytest.ini when there is none.
 */
async function pytestConfigOf(sandbox: Sandbox): Promise<{ name: string; content: string }> {
  const candidates: [string, RegExp | null][] = [
    ['pytest.ini', null],
    ['.pytest.ini', null],
    ['pyproject.toml', /^\[tool\.pytest\.ini_options\]/m],
    ['tox.ini', /^\[pytest\]/m],
    ['setup.cfg', /^\[tool:pytest\]/m],
  ];
  for (const [name, section] of candidates) {
    const st = await sandbox.stat(name);
    if (st?.type !== 'file') continue;
    const content = (await sandbox.readFile(name)).toString('utf8');
    if (!section || section.test(content)) return { name: name === '.pytest.ini' ? 'pytest.ini' : name, content };
  }
  return { name: 'pytest.ini', content: '[pytest]\n' };
}

/** The start state's test files (by content) and every symbolic link it has (by target): what a reset puts back. */
interface StartState {
  files: Map<string, Buffer>;
  links: Map<string, string>;
}

async function listEntries(sandbox: Sandbox): Promise<DirEntry[]> {
  return (await sandbox.list('.', { depth: 64, limit: 200_000 })).entries;
}

async function snapshotMatching(sandbox: Sandbox, globs: string[], signal?: AbortSignal): Promise<StartState> {
  const entries = await listEntries(sandbox);
  const files = new Map<string, Buffer>();
  for (const e of entries)
    if (e.type === 'file' && globs.length && matchesAny(e.path, globs)) files.set(e.path, await sandbox.readFile(e.path));
  return {
    files,
    links: await readLinks(
      sandbox,
      entries.filter((e) => e.type === 'symlink').map((e) => e.path),
      signal,
    ),
  };
}

/**
 * Puts every test file back as it was at the start and removes test files the patch added,
 * reading only plain files the listing shows: links, directories, FIFOs and unreadable files
 * the candidate left at a test path are removed unopened (`clearForHarness`) and noted.
 */
async function resetTestFiles(
  sandbox: Sandbox,
  globs: string[],
  start: StartState,
  notes: string[],
  signal?: AbortSignal,
): Promise<string[]> {
  if (!globs.length) return [];
  const now = (await listEntries(sandbox)).filter((e) => matchesAny(e.path, globs));
  const present = new Set(now.map((e) => e.path));
  const nowLinks = await readLinks(
    sandbox,
    now.filter((e) => e.type === 'symlink' && start.links.has(e.path)).map((e) => e.path),
    signal,
  );
  const added: string[] = [];
  const write = new Map<string, Buffer>();
  const relink = new Map<string, string>();
  for (const e of now) {
    const before = start.files.get(e.path);
    const target = start.links.get(e.path);
    if (before) {
      if (e.type === 'file') {
        const same = await sandbox.readFile(e.path).then(
          (b) => b.equals(before),
          (err) => (notes.push(`${REFUSED}: ${e.path} cannot be read (${toGymError(err).message}); reset without being read`), false),
        );
        if (same) continue;
      }
      write.set(e.path, before);
    } else if (target !== undefined) {
      if (e.type !== 'symlink' || nowLinks.get(e.path) !== target) relink.set(e.path, target);
    } else if (e.type !== 'dir') {
      // A directory of added test files: its files are removed one by one.
      added.push(e.path);
    }
  }
  for (const [rel, content] of start.files) if (!present.has(rel)) write.set(rel, content);
  for (const [rel, target] of start.links) if (matchesAny(rel, globs) && !present.has(rel)) relink.set(rel, target);
  const refused = await clearForHarness(sandbox, [...added, ...write.keys()], { startLinks: start.links, links: relink, signal });
  notes.push(...refused.map(refusedNote));
  for (const [rel, content] of write) await sandbox.writeFile(rel, content);
  return [...added, ...write.keys(), ...relink.keys()];
}
