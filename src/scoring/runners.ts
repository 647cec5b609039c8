import { createHash, randomBytes } from 'node:crypto';
import type { PreparedEnv } from '../env/types.ts';
import type { Sandbox, ExecResult } from '../sandbox/types.ts';
import type { RunnerSpec } from '../tasks/schema.ts';
import { mavenTestSelection, parseJavaTestId } from '../tasks/java_tests.ts';
import { shellQuote } from '../shell_quote.ts';
import { junitTestId, parseJUnitXml, pytestNodeId, type TestCaseResult } from './junit.ts';
import type { ScoringMode } from './mode.ts';
import { STRICT_PYTEST_LAUNCHER, StrictRecord, type StrictEvidence } from './strict.ts';

export interface TestRun {
  command: string;
  exec: ExecResult;
  tests: TestCaseResult[];
  /** The runner's own output, stdout then stderr. */
  log: string;
  /** Java runners: the report files read (written by this run: earlier ones are removed first). */
  reports?: string[];
  /** Strict pytest runs: the launcher's record of the session, for the cross-checks (strict.ts). */
  strict?: StrictEvidence;
}

export interface RunTestsOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  maxOutputBytes?: number;
  /** pytest: read the configuration from this file (relative to the workspace) instead of discovering it. */
  pytestConfig?: string;
  /** strict: pytest through STRICT_PYTEST_LAUNCHER (no autoloaded plugin, no bytecode, a record of the session); default faithful. */
  scoring?: ScoringMode;
  /** Maven and Gradle: words appended to the sandbox's value of each variable for the run (`MAVEN_OPTS`: a JVM option of the scoring's). */
  appendEnv?: Record<string, string>;
}

/**
 * What strict runs set for every runner: no plugin autoloading, no bytecode
 * written; BENCHGYM_SCORING tells exit-code harnesses (a suite's scorer script).
 */
export const STRICT_ENV: Record<string, string> = {
  PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1',
  PYTHONDONTWRITEBYTECODE: '1',
  BENCHGYM_SCORING: 'strict',
};

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

/**
 * The report folder is the harness's: whatever the candidate left at its name (a link out of
 * the workspace, a file) is removed inside the sandbox, where `rm` never follows a link.
 */
async function clearReportDir(sandbox: Sandbox): Promise<void> {
  await sandbox.exec(`rm -rf -- ${REPORT_DIR}`, { timeoutMs: 60_000 });
}

/** Runs a task's tests with its runner and parses per-test results from its reports. */
export async function runTests(sandbox: Sandbox, env: PreparedEnv, spec: RunnerSpec, opts: RunTestsOptions): Promise<TestRun> {
  const strict = opts.scoring === 'strict';
  const execOpts = {
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    onOutput: opts.onOutput,
    maxOutputBytes: opts.maxOutputBytes ?? 512 * 1024,
    ...(strict ? { env: STRICT_ENV } : {}),
  };
  if (spec.type === 'pytest') await clearReportDir(sandbox);
  if (spec.type === 'pytest' && strict) {
    const report = `${REPORT_DIR}/${randomBytes(8).toString('hex')}.xml`;
    const config = opts.pytestConfig ? ['-c', opts.pytestConfig, '--rootdir=.'] : [];
    const args = [...config, '-p', 'no:cacheprovider', '-o', 'junit_family=xunit1', `--junitxml=${report}`, '-rfE', ...spec.args];
    const session = await strictPytest(sandbox, env, args, execOpts);
    const xml = await sandbox.readFile(report).catch(() => null);
    await sandbox.remove(REPORT_DIR).catch(() => {});
    const tests = parseJUnitXml(xml?.toString('utf8') ?? '').map((c) => toResult(pytestNodeId(c.attrs), c));
    const evidence = { ...session.evidence, junitSha256: xml ? createHash('sha256').update(xml).digest('hex') : null };
    return {
      command: `python -m pytest ${args.map(shellQuote).join(' ')} (strict)`,
      exec: session.exec,
      tests,
      log: joinLog(session.exec),
      strict: evidence,
    };
  }
  if (spec.type === 'pytest') {
    // An unguessable report name: code under test cannot pre-write a passing report.
    const report = `${REPORT_DIR}/${randomBytes(8).toString('hex')}.xml`;
    const config = opts.pytestConfig ? ['-c', opts.pytestConfig, '--rootdir=.'] : [];
    const args = [...config, '-p', 'no:cacheprovider', '-o', 'junit_family=xunit1', `--junitxml=${report}`, '-rfE', ...spec.args]
      .map(shellQuote)
      .join(' ');
    const exec = await sandbox.exec(`${shellQuote(env.command)} -c ${shellQuote(PYTEST_LAUNCHER)} ${args}`, execOpts);
    const xml = await sandbox
      .readFile(report)
      .then((b) => b.toString('utf8'))
      .catch(() => '');
    await sandbox.remove(REPORT_DIR).catch(() => {});
    const tests = parseJUnitXml(xml).map((c) => toResult(pytestNodeId(c.attrs), c));
    // Exit codes 2-5 (interrupted, internal, usage, nothing collected) can all be caused by
    // the code or config under test, so they count against it, never as harness errors.
    return { command: `python -m pytest ${args}`, exec, tests, log: joinLog(exec) };
  }
  if (spec.type === 'maven' || spec.type === 'gradle') {
    const build =
      spec.type === 'maven'
        ? mavenCommand(env.command, spec.tests, spec.args, spec.exclude)
        : gradleCommand(env.command, spec.tests, spec.args);
    const command = appendedEnv(opts.appendEnv) + build;
    const exec = await sandbox.exec(`${REMOVE_REPORTS} && ${command}`, execOpts);
    const { tests, reports } = await readJavaReports(sandbox);
    return { command, exec, tests, log: joinLog(exec), reports };
  }
  const exec = await sandbox.exec(spec.command, execOpts);
  const status = exec.exitCode === 0 && !exec.timedOut ? 'passed' : 'failed';
  return { command: spec.command, exec, tests: [{ name: 'script', status, durationMs: exec.durationMs }], log: joinLog(exec) };
}

/**
 * pytest through the strict launcher: a control file (nonce, record path)
 * it reads and deletes before any workspace code runs, then its record.
 */
async function strictPytest(
  sandbox: Sandbox,
  env: PreparedEnv,
  args: string[],
  execOpts: Parameters<Sandbox['exec']>[1],
): Promise<{ exec: ExecResult; evidence: Omit<StrictEvidence, 'junitSha256'> }> {
  const id = randomBytes(8).toString('hex');
  const nonce = randomBytes(16).toString('hex');
  const control = `${REPORT_DIR}/${id}.control.json`;
  await clearReportDir(sandbox);
  const out = `${REPORT_DIR}/${randomBytes(8).toString('hex')}.record.json`;
  await sandbox.writeFile(control, JSON.stringify({ nonce, out }));
  const exec = await sandbox.exec(
    `${shellQuote(env.command)} -B -c ${shellQuote(STRICT_PYTEST_LAUNCHER)} ${[control, ...args].map(shellQuote).join(' ')}`,
    execOpts,
  );
  const text = await sandbox
    .readFile(out)
    .then((b) => b.toString('utf8'))
    .catch(() => '');
  let record: StrictRecord | null = null;
  try {
    const parsed = StrictRecord.safeParse(JSON.parse(text));
    if (parsed.success) record = parsed.data;
  } catch {
    // No record, or not one the launcher wrote: the cross-checks say so.
  }
  return { exec, evidence: { record, nonce } };
}

/**
 * The test ids pytest collects from the hidden tests as they are (no candidate patch), by the
 * strict launcher; undefined when collection fails there (the start state may not import).
 */
export async function collectPytestIds(
  sandbox: Sandbox,
  env: PreparedEnv,
  spec: RunnerSpec,
  opts: RunTestsOptions,
): Promise<string[] | undefined> {
  if (spec.type !== 'pytest') return undefined;
  const config = opts.pytestConfig ? ['-c', opts.pytestConfig, '--rootdir=.'] : [];
  const { exec, evidence } = await strictPytest(sandbox, env, [...config, '-p', 'no:cacheprovider', '--collect-only', '-q', ...spec.args], {
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    maxOutputBytes: 256 * 1024,
    env: STRICT_ENV,
  });
  await sandbox.remove(REPORT_DIR).catch(() => {});
  const r = evidence.record;
  return exec.exitCode === 0 && r?.nonce === evidence.nonce && r.collected?.length ? r.collected : undefined;
}

function toResult(
  name: string,
  c: { attrs: Record<string, string>; status: TestCaseResult['status']; message?: string; details?: string },
): TestCaseResult {
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

/** `VAR="${VAR:+$VAR }words" ` for each variable: the command's own environment, the sandbox's value kept. */
function appendedEnv(vars: Record<string, string> = {}): string {
  return Object.entries(vars)
    .filter(([name]) => /^[A-Z_][A-Z0-9_]*$/.test(name))
    .map(([name, words]) => `${name}="\${${name}:+\$${name} }"${shellQuote(words)} `)
    .join('');
}

/** Surefire and Gradle report folders are removed before every run: only this run's reports count. */
const REMOVE_REPORTS =
  "find . \\( -path '*/target/surefire-reports' -o -path '*/build/test-results' \\) -prune -exec rm -rf {} + 2>/dev/null; true";

/**
 * `mvn -o test` over the modules the tests name (`-pl m -am`: their upstream modules are built
 * too) or the whole reactor, with `-Dtest` when tests are chosen. Patterns for modules that
 * hold none of them are allowed to match nothing.
 */
export function mavenCommand(mvn: string, tests: string[], args: string[] = [], exclude: string[] = []): string {
  return [
    shellQuote(mvn),
    '-o',
    '-B',
    '-Dstyle.color=never',
    ...args.map(shellQuote),
    ...mavenTestSelection(tests, exclude).map(shellQuote),
    'test',
  ].join(' ');
}

/** `gradle --offline test` per module (`:m:test`) with `--tests` filters (`Class#method` becomes `Class.method`). */
export function gradleCommand(gradle: string, tests: string[], args: string[] = []): string {
  const ids = tests.map(parseJavaTestId);
  const tasks =
    ids.length && ids.every((t) => t.module) ? [...new Set(ids.map((t) => `:${t.module!.replace(/\//g, ':')}:test`))] : ['test'];
  // `module:test` (Multi-SWE-bench's form for a Gradle module's whole test task) needs no filter.
  const filters = ids
    .filter((t) => !(t.module && t.pattern === 'test'))
    .flatMap((t) => ['--tests', shellQuote(t.pattern.replace('#', '.'))]);
  return [
    shellQuote(gradle),
    '--offline',
    '--no-daemon',
    '--continue',
    '--console=plain',
    ...args.map(shellQuote),
    ...tasks,
    ...filters,
  ].join(' ');
}

/**
 * Every Surefire (`<module>/target/surefire-reports/TEST-*.xml`) and Gradle
 * (`<module>/build/test-results/<task>/TEST-*.xml`) report in the workspace, parsed. Test
 * names are `Class#method`, prefixed with `module:` outside the root module.
 */
export async function readJavaReports(sandbox: Sandbox): Promise<{ tests: TestCaseResult[]; reports: string[] }> {
  const found = await sandbox.exec(
    "find . \\( -path '*/target/surefire-reports/TEST-*.xml' -o -path '*/build/test-results/*/TEST-*.xml' \\) -type f 2>/dev/null | sort",
    { timeoutMs: 60_000 },
  );
  const reports = found.stdout
    .split('\n')
    .map((l) => l.trim().replace(/^\.\//, ''))
    .filter(Boolean);
  const tests: TestCaseResult[] = [];
  for (const rel of reports) {
    const module = rel.replace(/\/?(target\/surefire-reports|build\/test-results\/[^/]+)\/TEST-[^/]*$/, '');
    const xml = (await sandbox.readFile(rel).catch(() => Buffer.from(''))).toString('utf8');
    for (const c of parseJUnitXml(xml)) tests.push(toResult(`${module ? `${module}:` : ''}${junitTestId(c.attrs)}`, c));
  }
  return { tests, reports };
}
