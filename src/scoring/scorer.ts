import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { INFRA_CODES, toGymError } from '../errors.ts';
import { matchesAny } from '../sandbox/glob.ts';
import type { Sandbox, SandboxFactory } from '../sandbox/types.ts';
import type { Task } from '../tasks/schema.ts';
import { runTests } from './runners.ts';
import { decide, type Verdict } from './verdict.ts';
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
    const originalTests = await snapshotMatching(sandbox, testGlobs);
    const pristineConfig = task.tests.hidden.runner.type === 'pytest' ? await pytestConfigOf(sandbox) : undefined;

    const applied = await sandbox.applyPatch(patch);
    log.push(`apply (${applied.method ?? 'failed'}):\n${applied.log}`);
    if (!applied.ok) {
      return await finish({ reward: 0, status: 'failed', tests: [], notes: [...notes, 'PATCH_APPLY_FAILED: the patch does not apply to the start state'] });
    }
    for (const reset of await resetTestFiles(sandbox, testGlobs, originalTests)) notes.push(`test file reset to its start state: ${reset}`);
    for (const [rel, content] of Object.entries(task.tests.hidden.files)) await sandbox.writeFile(rel, content);
    let pytestConfig: string | undefined;
    if (pristineConfig) {
      // pytest reads its configuration as it was at the start: a patch that adds addopts or
      // plugins to pyproject.toml / setup.cfg changes the code, not how it is tested.
      pytestConfig = `${PRISTINE_DIR}/${pristineConfig.name}`;
      await sandbox.writeFile(pytestConfig, pristineConfig.content);
    }

    opts.progress?.('running the hidden tests');
    const run = await runTests(sandbox, env, task.tests.hidden.runner, { timeoutMs: task.tests.hidden.timeoutMs, signal: opts.signal, pytestConfig });
    log.push(`$ ${run.command}\nexit ${run.exec.exitCode}${run.exec.timedOut ? ' (timed out)' : ''}\n${run.log}`);
    return await finish(decide(run, task.tests, notes));
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

async function listFiles(sandbox: Sandbox): Promise<string[]> {
  const { entries } = await sandbox.list('.', { depth: 64, limit: 200_000 });
  return entries.filter((e) => e.type === 'file' || e.type === 'symlink').map((e) => e.path);
}

async function snapshotMatching(sandbox: Sandbox, globs: string[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (!globs.length) return out;
  for (const rel of await listFiles(sandbox)) if (matchesAny(rel, globs)) out.set(rel, await sandbox.readFile(rel));
  return out;
}

/** Puts every test file back as it was at the start; removes test files the patch added. */
async function resetTestFiles(sandbox: Sandbox, globs: string[], original: Map<string, Buffer>): Promise<string[]> {
  if (!globs.length) return [];
  const changed: string[] = [];
  const now = new Set((await listFiles(sandbox)).filter((rel) => matchesAny(rel, globs)));
  for (const rel of now) {
    const before = original.get(rel);
    if (!before) {
      await sandbox.remove(rel);
      changed.push(rel);
    } else if (!before.equals(await sandbox.readFile(rel))) {
      await sandbox.writeFile(rel, before);
      changed.push(rel);
    }
  }
  for (const [rel, content] of original) {
    if (!now.has(rel)) {
      await sandbox.writeFile(rel, content);
      changed.push(rel);
    }
  }
  return changed;
}

