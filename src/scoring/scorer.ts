import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { INFRA_CODES, toGymError } from '../errors.ts';
import { matchesAny } from '../sandbox/glob.ts';
import type { DirEntry, Sandbox, SandboxFactory } from '../sandbox/types.ts';
import { candidateNote, clearForHarness, readLinks, REFUSED, refusedNote } from './candidate_files.ts';
import type { Task } from '../tasks/schema.ts';
import { collectPytestIds, runTests } from './runners.ts';
import { decide, type Verdict } from './verdict.ts';
import { TAMPER, type ScoringMode } from './mode.ts';
import { REMOVE_BYTECODE, pytestEntryPoints, pytestFindings, scriptFindings, stripCompiled } from './strict.ts';
import { seedOf } from '../tasks/seed.ts';
import { sandboxEnv } from '../env/types.ts';

export interface ScoreDeps {
  sandboxes: SandboxFactory;
  /** Where scoring logs are written (`Verdict.logRef`). */
  logDir?: string;
}

export interface ScoreOptions {
  signal?: AbortSignal;
  progress?: (message: string) => void;
  /** strict (default): known tricks give reward 0 with a TAMPER_SUSPECTED note; faithful: the benchmark's own harness. */
  scoring?: ScoringMode;
}

/** Files every pytest task resets: they could otherwise rewrite how tests run. */
const ALWAYS_RESET_PYTHON = ['**/conftest.py', 'pytest.ini', 'tox.ini'];

/** Does the hidden test run pytest (so that conftest.py and pytest.ini decide how it runs)? A task whose answer is a conftest.py function (CoderEval) runs a plain script. */
function runsPytest(task: Task): boolean {
  const runner = task.tests.hidden.runner;
  return runner.type === 'pytest' || (runner.type === 'script' && /pytest/.test(runner.command));
}

/** Completes a verdict (task, suite, duration) and, with a log directory, keeps the scoring log and points to it. */
export function verdictWriter(task: Task, deps: ScoreDeps, log: string[], started: number): (v: Omit<Verdict, 'taskId' | 'suite' | 'durationMs' | 'logRef'>) => Promise<Verdict> {
  return async (v) => {
    const verdict: Verdict = { taskId: task.id, suite: task.suite, ...v, durationMs: Date.now() - started };
    if (deps.logDir) {
      const file = path.join(deps.logDir, `${task.suite}-${task.id.replace(/[^\w.-]+/g, '_')}-${randomBytes(4).toString('hex')}.log`);
      await fs.mkdir(deps.logDir, { recursive: true });
      await fs.writeFile(file, log.join('\n') + '\n');
      verdict.logRef = file;
    }
    return verdict;
  };
}

/**
 * Scores a patch the way the benchmarks do: a fresh sandbox from the untouched start state,
 * the patch applied, the task's test files reset, the hidden tests added, the hidden tests
 * run, reports parsed, a verdict. The episode's own sandbox is never reused, so nothing the
 * agent left running or cached can influence it.
 */
export async function scorePatch(task: Task, patch: string, deps: ScoreDeps, opts: ScoreOptions = {}): Promise<Verdict> {
  const started = Date.now();
  const notes: string[] = [];
  const log: string[] = [`task ${task.suite}/${task.id}`, `patch: ${patch.length} bytes`];
  let sandbox: Sandbox | undefined;
  const finish = verdictWriter(task, deps, log, started);
  try {
    opts.progress?.('preparing the environment');
    const env = await deps.sandboxes.prepare(task);
    notes.push(...env.notes);
    opts.progress?.('laying out a fresh sandbox');
    sandbox = await deps.sandboxes.create({ seed: seedOf(task, env), env: sandboxEnv(env), labels: { 'benchgym.task': task.id, 'benchgym.role': 'scorer' } });
    const testGlobs = [...task.tests.testFiles, ...(task.language === 'python' && runsPytest(task) ? ALWAYS_RESET_PYTHON : [])];
    const originalTests = await snapshotMatching(sandbox, testGlobs, opts.signal);
    const pristineConfig = task.tests.hidden.runner.type === 'pytest' ? await pytestConfigOf(sandbox) : undefined;
    const strict = (opts.scoring ?? 'strict') === 'strict';
    log.push(`scoring: ${strict ? 'strict' : 'faithful'}`);
    const tamper: string[] = [];
    let expectedIds: string[] | undefined;
    if (strict && task.language === 'python') {
      // Bytecode or an extension module in the diff would run instead of the source it shows.
      const stripped = stripCompiled(patch);
      if (stripped.removed.length) {
        patch = stripped.patch;
        tamper.push(`compiled Python files (bytecode, extension modules) in the patch, removed: ${stripped.removed.slice(0, 5).join(', ')}`);
      }
      const plugins = pytestEntryPoints(patch);
      if (plugins.length) tamper.push(`the patch declares a pytest plugin entry point (not loaded: autoloading is off): ${plugins.slice(0, 5).join(', ')}`);
      if (pristineConfig && !task.tests.failToPass.length && !task.tests.passToPass.length) {
        expectedIds = await collectInStartState(sandbox, env, task, pristineConfig, opts);
        log.push(`hidden tests collected in the start state: ${expectedIds ? expectedIds.length : 'none (collection fails there)'}`);
      }
    }

    const applied = await sandbox.applyPatch(patch);
    log.push(`apply (${applied.method ?? 'failed'}):\n${applied.log}`);
    if (!applied.ok) {
      return await finish({ reward: 0, status: 'failed', tests: [], notes: [...notes, 'PATCH_APPLY_FAILED: the patch does not apply to the start state'] });
    }
    let pytestConfig: string | undefined;
    // From here on the work tree is the candidate's: what its files make the harness's own file
    // operations fail on (links out, directories, FIFOs) is a wrong answer, never an error.
    try {
      for (const reset of await resetTestFiles(sandbox, testGlobs, originalTests, notes, opts.signal)) notes.push(`test file reset to its start state: ${reset}`);
      const harnessFiles: Record<string, string> = { ...task.tests.hidden.files };
      if (pristineConfig) {
        // pytest reads its configuration as it was at the start: a patch that adds addopts or
        // plugins to pyproject.toml / setup.cfg changes the code, not how it is tested.
        pytestConfig = `${PRISTINE_DIR}/${pristineConfig.name}`;
        harnessFiles[pytestConfig] = pristineConfig.content;
      }
      notes.push(...(await clearForHarness(sandbox, Object.keys(harnessFiles), { startLinks: originalTests.links, signal: opts.signal })).map(refusedNote));
      for (const [rel, content] of Object.entries(harnessFiles)) await sandbox.writeFile(rel, content);
    } catch (err) {
      const note = candidateNote(err);
      if (!note) throw err;
      log.push(note);
      return await finish({ reward: 0, status: 'failed', tests: [], notes: [...notes, note] });
    }

    if (strict && task.language === 'python') await sandbox.exec(REMOVE_BYTECODE, { timeoutMs: 60_000 });

    opts.progress?.('running the hidden tests');
    const run = await runTests(sandbox, env, task.tests.hidden.runner, { timeoutMs: task.tests.hidden.timeoutMs, signal: opts.signal, pytestConfig, scoring: strict ? 'strict' : 'faithful' });
    log.push(`$ ${run.command}\nexit ${run.exec.exitCode}${run.exec.timedOut ? ' (timed out)' : ''}\n${run.log}`);
    const decided = decide(run, { ...task.tests, passWhen: task.tests.hidden.passWhen }, notes);
    if (strict) {
      if (run.strict && decided.reward === 1) tamper.push(...pytestFindings(run, run.strict, expectedIds));
      if (task.tests.hidden.runner.type === 'script') tamper.push(...scriptFindings(run));
      if (run.strict?.record?.notes.length) decided.notes.push(...run.strict.record.notes);
    }
    if (tamper.length) {
      log.push(...tamper.map((t) => `${TAMPER}: ${t}`));
      return await finish({ ...decided, reward: 0, status: 'failed', notes: [...decided.notes, ...tamper.map((t) => `${TAMPER}: ${t}`)] });
    }
    return await finish(decided);
  } catch (err) {
    const e = toGymError(err);
    if (e.code === 'CANCELLED') throw e;
    log.push(`error ${e.code}: ${e.message}`);
    // The solution's failures show up as test results; anything thrown here is the harness's.
    return await finish({ reward: 0, status: 'error', tests: [], notes, error: { code: INFRA_CODES.has(e.code) ? e.code : 'INTERNAL', message: e.message } });
  } finally {
    await sandbox?.destroy().catch(() => {});
  }
}

const PRISTINE_DIR = '.benchgym-pristine';

/**
 * The ids pytest collects from the hidden tests in the start state (before the patch), with
 * the start state's configuration; the hidden files and the configuration copy are then
 * taken away again so the patch applies to the start state as it was.
 */
async function collectInStartState(sandbox: Sandbox, env: Awaited<ReturnType<SandboxFactory['prepare']>>, task: Task, config: { name: string; content: string }, opts: ScoreOptions): Promise<string[] | undefined> {
  const hidden = Object.entries(task.tests.hidden.files);
  const before = new Map<string, Buffer | null>();
  for (const [rel] of hidden) before.set(rel, (await sandbox.stat(rel))?.type === 'file' ? await sandbox.readFile(rel) : null);
  try {
    for (const [rel, content] of hidden) await sandbox.writeFile(rel, content);
    const pytestConfig = `${PRISTINE_DIR}/${config.name}`;
    await sandbox.writeFile(pytestConfig, config.content);
    return await collectPytestIds(sandbox, env, task.tests.hidden.runner, { timeoutMs: task.tests.hidden.timeoutMs, signal: opts.signal, pytestConfig });
  } finally {
    for (const [rel, content] of before) await (content ? sandbox.writeFile(rel, content) : sandbox.remove(rel)).catch(() => {});
    await sandbox.remove(PRISTINE_DIR).catch(() => {});
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
  for (const e of entries) if (e.type === 'file' && globs.length && matchesAny(e.path, globs)) files.set(e.path, await sandbox.readFile(e.path));
  return { files, links: await readLinks(sandbox, entries.filter((e) => e.type === 'symlink').map((e) => e.path), signal) };
}

/**
 * Puts every test file back as it was at the start and removes test files the patch added,
 * reading only plain files the listing shows: links, directories, FIFOs and unreadable files
 * the candidate left at a test path are removed unopened (`clearForHarness`) and noted.
 */
async function resetTestFiles(sandbox: Sandbox, globs: string[], start: StartState, notes: string[], signal?: AbortSignal): Promise<string[]> {
  if (!globs.length) return [];
  const now = (await listEntries(sandbox)).filter((e) => matchesAny(e.path, globs));
  const present = new Set(now.map((e) => e.path));
  const nowLinks = await readLinks(sandbox, now.filter((e) => e.type === 'symlink' && start.links.has(e.path)).map((e) => e.path), signal);
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

