import type { EnvSpec, RunnerSpec } from '../../src/tasks/schema.ts';
import { isSourcePath, type Language } from './functions.ts';

/** The runner a change's tests run with when none is given: pytest or Maven over the whole suite. */
export function defaultRunner(language: Language, testArgs: string[] = []): RunnerSpec {
  return language === 'python' ? { type: 'pytest', args: [...PYTEST_ARGS, ...testArgs] } : { type: 'maven', tests: testArgs, args: [] };
}

/**
 * pytest's arguments in every HumanEvo run: a module that fails to collect on the era's Python
 * (pydash's 2014 `tests/fixtures.py`, whose `__getattr__` raises KeyError when Python 3.4+'s
 * doctest unwrapping probes it under `--doctest-modules`) costs that module's tests, not the
 * whole session's; its tests are missing, so they count as failing.
 */
export const PYTEST_ARGS = ['--continue-on-collection-errors'];

/**
 * The JUnit class a Java test file holds, as test ids name it: `src/test/java/a/B.java` → `a.B`,
 * and outside the root module `core/src/test/java/a/B.java` → `core:a.B` (the Surefire reports' form).
 */
function javaTestClass(file: string): string {
  const m = /^(?:(.+)\/)?src\/test\/java\/(.+)\.java$/.exec(file);
  if (!m)
    return file
      .replace(/\.java$/, '')
      .split('/')
      .join('.');
  return `${m[1] ? `${m[1]}:` : ''}${m[2]!.split('/').join('.')}`;
}

/**
 * The runner limited to a change's test files: pytest gets them as arguments; Maven gets their
 * classes (`module:pkg.Class`, so a multi-module build runs `-pl module -am`).
 */
export function scopedRunner(language: Language, runner: RunnerSpec, testFiles: string[]): RunnerSpec {
  const sources = testFiles.filter((f) => isSourcePath(language, f));
  if (runner.type === 'pytest') return { ...runner, args: [...runner.args.filter((a) => a.startsWith('-')), ...sources] };
  if (runner.type === 'maven') {
    return { ...runner, tests: sources.map(javaTestClass) };
  }
  return runner;
}

/**
 * A Java era's `-D` overrides (`java_era.ts`) on the test runs too, not only the env's build:
 * each run compiles the tree again, and the task's runner carries them to scoring.
 */
export function withEraArgs(runner: RunnerSpec, env: EnvSpec): RunnerSpec {
  if (runner.type !== 'maven' || env.kind !== 'java' || !env.args.length) return runner;
  return { ...runner, args: [...runner.args, ...env.args.filter((a) => !runner.args.includes(a))] };
}

/**
 * pytest collecting what nose did: nose took any module whose name has `test` after a start,
 * `_`, `-` or `.` (arrow's 2013 `tests/arrow_tests.py`), pytest only `test_*.py` and
 * `*_test.py`: a nose-era change's tests would not run at all.
 */
export function noseRunner(runner: RunnerSpec): RunnerSpec {
  if (runner.type !== 'pytest' || runner.args.some((a) => a.startsWith('python_files='))) return runner;
  return { ...runner, args: [...runner.args, '-o', 'python_files=test*.py *_test*.py *-test*.py'] };
}

/** Does a test id belong to one of these test files? */
export function testInFiles(language: Language, id: string, files: string[]): boolean {
  if (language === 'python') return files.some((f) => id === f || id.startsWith(`${f}::`));
  const cls = id.split('#')[0]!;
  return files.some((f) => {
    const c = javaTestClass(f);
    return cls === c || cls.startsWith(`${c}$`);
  });
}
