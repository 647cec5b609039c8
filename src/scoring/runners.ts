import { randomBytes } from 'node:crypto';
import type { PreparedEnv } from '../env/types.ts';
import type { Sandbox, ExecResult } from '../sandbox/types.ts';
import type { RunnerSpec } from '../tasks/schema.ts';
import { junitTestId, parseJUnitXml, pytestNodeId, type TestCaseResult } from './junit.ts';

export interface TestRun {
  command: string;
  exec: ExecResult;
  tests: TestCaseResult[];
  /** The runner's own output, stdout then stderr. */
  log: string;
}

export interface RunTestsOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  maxOutputBytes?: number;
  /** pytest: read the configuration from this file (relative to the workspace) instead of discovering it. */
  pytestConfig?: string;
}

const REPORT_DIR = '.benchgym-reports';

/**
 * `python -m pytest`, except that pytest and its plugins are imported before the workspace
 * joins sys.path: a `pytest.py` (or `_pytest/`, `pluggy.py`) in the workspace cannot stand
 * in for the test runner and write its own report.
 */
export const PYTEST_LAUNCHER = [
  'import importlib, os, sys',
  'cwd = os.getcwd()',
  "sys.path[:] = [p for p in sys.path if p not in ('', '.', cwd)]",
  'import pytest, _pytest.config',
  'for name in _pytest.config.default_plugins:',
  '    try: importlib.import_module("_pytest." + name)',
  '    except Exception: pass',
  'sys.path.insert(0, cwd)',
  'sys.exit(pytest.main(sys.argv[1:]))',
].join('\n');

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs a task's tests with its runner and parses per-test results from its reports. */
export async function runTests(sandbox: Sandbox, env: PreparedEnv, spec: RunnerSpec, opts: RunTestsOptions): Promise<TestRun> {
  const execOpts = { timeoutMs: opts.timeoutMs, signal: opts.signal, onOutput: opts.onOutput, maxOutputBytes: opts.maxOutputBytes ?? 512 * 1024 };
  if (spec.type === 'pytest') {
    // An unguessable report name: code under test cannot pre-write a passing report.
    const report = `${REPORT_DIR}/${randomBytes(8).toString('hex')}.xml`;
    const config = opts.pytestConfig ? ['-c', opts.pytestConfig, '--rootdir=.'] : [];
    const args = [...config, '-p', 'no:cacheprovider', '-o', 'junit_family=xunit1', `--junitxml=${report}`, '-rfE', ...spec.args].map(shellQuote).join(' ');
    const exec = await sandbox.exec(`${shellQuote(env.command)} -c ${shellQuote(PYTEST_LAUNCHER)} ${args}`, execOpts);
    const xml = await sandbox.readFile(report).then((b) => b.toString('utf8')).catch(() => '');
    await sandbox.remove(REPORT_DIR).catch(() => {});
    const tests = parseJUnitXml(xml).map((c) => toResult(pytestNodeId(c.attrs), c));
    // Exit codes 2-5 (interrupted, internal, usage, nothing collected) can all be caused by
    // the code or config under test, so they count against it, never as harness errors.
    return { command: `python -m pytest ${args}`, exec, tests, log: joinLog(exec) };
  }
  if (spec.type === 'maven') {
    const select = spec.tests.length ? [`-Dtest=${shellQuote(spec.tests.join(','))}`, '-Dsurefire.failIfNoSpecifiedTests=false'] : [];
    const command = ['rm -rf target/surefire-reports &&', shellQuote(env.command), '-o', '-B', '-Dstyle.color=never', ...select, 'test'].join(' ');
    const exec = await sandbox.exec(command, execOpts);
    const tests: TestCaseResult[] = [];
    const listing = await sandbox.list('target/surefire-reports', { depth: 1 }).catch(() => ({ entries: [] }));
    for (const entry of listing.entries.filter((e) => /\/TEST-.*\.xml$/.test(e.path))) {
      const xml = (await sandbox.readFile(entry.path)).toString('utf8');
      for (const c of parseJUnitXml(xml)) tests.push(toResult(junitTestId(c.attrs), c));
    }
    return { command, exec, tests, log: joinLog(exec) };
  }
  const exec = await sandbox.exec(spec.command, execOpts);
  const status = exec.exitCode === 0 && !exec.timedOut ? 'passed' : 'failed';
  return { command: spec.command, exec, tests: [{ name: 'script', status, durationMs: exec.durationMs }], log: joinLog(exec) };
}

function toResult(name: string, c: { attrs: Record<string, string>; status: TestCaseResult['status']; message?: string; details?: string }): TestCaseResult {
  const seconds = Number(c.attrs.time);
  return {
    name,
    status: c.status,
    ...(c.message ? { message: c.message } : {}),
    ...(c.details ? { details: c.details } : {}),
    ...(Number.isFinite(seconds) ? { durationMs: Math.round(seconds * 1000) } : {}),
  };
}

function joinLog(exec: ExecResult): string {
  return exec.stderr ? `${exec.stdout}\n--- stderr ---\n${exec.stderr}` : exec.stdout;
}
