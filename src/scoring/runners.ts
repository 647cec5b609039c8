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
  /** True when the runner itself could not run the tests (usage error), not the code under test. */
  harnessError?: string;
}

export interface RunTestsOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  maxOutputBytes?: number;
}

const REPORT_DIR = '.benchgym-reports';

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs a task's tests with its runner and parses per-test results from its reports. */
export async function runTests(sandbox: Sandbox, env: PreparedEnv, spec: RunnerSpec, opts: RunTestsOptions): Promise<TestRun> {
  const execOpts = { timeoutMs: opts.timeoutMs, signal: opts.signal, onOutput: opts.onOutput, maxOutputBytes: opts.maxOutputBytes ?? 512 * 1024 };
  if (spec.type === 'pytest') {
    // An unguessable report name: code under test cannot pre-write a passing report.
    const report = `${REPORT_DIR}/${randomBytes(8).toString('hex')}.xml`;
    const command = [
      shellQuote(env.command), '-m', 'pytest', '-p', 'no:cacheprovider', '-o', 'junit_family=xunit1',
      `--junitxml=${report}`, '-rfE', ...spec.args.map(shellQuote),
    ].join(' ');
    const exec = await sandbox.exec(command, execOpts);
    const xml = await sandbox.readFile(report).then((b) => b.toString('utf8')).catch(() => '');
    await sandbox.remove(REPORT_DIR).catch(() => {});
    const tests = parseJUnitXml(xml).map((c) => toResult(pytestNodeId(c.attrs), c));
    // pytest exit 4 is a usage error (e.g. a test path that does not exist): the harness's fault.
    const harnessError = exec.exitCode === 4 ? 'pytest usage error (exit 4)' : undefined;
    return { command, exec, tests, log: joinLog(exec), harnessError };
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
