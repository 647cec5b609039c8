/**
 * Java test ids (`Class`, `Class#method`, `module:Class[#method]`) and the Maven arguments that
 * select them: shared by the test runners (scoring, run_tests) and the env builders, which
 * warm an env by running a task's tests instead of the whole suite.
 */

/** A Java test id: `Class`, `Class#method` or `module:Class[#method]` (module = its directory, `.` for the root). */
export function parseJavaTestId(id: string): { module?: string; pattern: string } {
  const colon = id.indexOf(':');
  if (colon <= 0) return { pattern: id };
  const module = id.slice(0, colon).replace(/\/+$/, '');
  return module === '.' ? { pattern: id.slice(colon + 1) } : { module, pattern: id.slice(colon + 1) };
}

/**
 * Maven's arguments for these tests (unquoted): `-pl <modules> -am` when every id names its
 * module (their upstream modules are built too), else the whole reactor; `-Dtest` with the
 * patterns, allowed to match nothing in modules that hold none of them. Nothing for no tests.
 */
export function mavenTestSelection(tests: readonly string[]): string[] {
  if (!tests.length) return [];
  const ids = tests.map(parseJavaTestId);
  const modules = [...new Set(ids.map((t) => t.module).filter((m): m is string => Boolean(m)))];
  const pl = ids.every((t) => t.module) ? ['-pl', modules.join(','), '-am'] : [];
  return [...pl, `-Dtest=${ids.map((t) => t.pattern).join(',')}`, '-Dsurefire.failIfNoSpecifiedTests=false', '-DfailIfNoTests=false'];
}

/**
 * Linux refuses one argument over 128 KiB (MAX_ARG_STRLEN), and `sh -c` takes a whole command as
 * one: a selection longer than this is not worth the risk where the whole suite would do (an env's
 * warm-up run).
 */
export const MAX_SELECTION_CHARS = 64 * 1024;
