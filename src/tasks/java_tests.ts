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

/** The top-level class a test id names (its method and nested classes dropped), with its module if it names one. */
export function javaTestClass(id: string): { module?: string; cls: string } {
  const { module, pattern } = parseJavaTestId(id);
  return { ...(module ? { module } : {}), cls: pattern.split('#')[0]!.split('$')[0]! };
}

/**
 * Maven's arguments for these tests (unquoted): `-pl <modules> -am` when every id names its
 * module (their upstream modules are built too), else the whole reactor; `-Dtest` with the
 * patterns, allowed to match nothing in modules that hold none of them. Nothing for no tests.
 * `exclude`: tests left out (`Class#method`, module prefixes dropped), each as Surefire's `!` pattern
 * in the same `-Dtest` (Surefire 2.19+): with no tests, everything else runs.
 */
export function mavenTestSelection(tests: readonly string[], exclude: readonly string[] = []): string[] {
  const out = exclude.map((id) => `!${parseJavaTestId(id).pattern}`);
  if (!tests.length)
    return out.length ? [`-Dtest=${out.join(',')}`, '-Dsurefire.failIfNoSpecifiedTests=false', '-DfailIfNoTests=false'] : [];
  const ids = tests.map(parseJavaTestId);
  const modules = [...new Set(ids.map((t) => t.module).filter((m): m is string => Boolean(m)))];
  const pl = ids.every((t) => t.module) ? ['-pl', modules.join(','), '-am'] : [];
  return [
    ...pl,
    `-Dtest=${[...ids.map((t) => t.pattern), ...out].join(',')}`,
    '-Dsurefire.failIfNoSpecifiedTests=false',
    '-DfailIfNoTests=false',
  ];
}

/**
 * Linux refuses one argument over 128 KiB (MAX_ARG_STRLEN), and `sh -c` takes a whole command as
 * one: a selection longer than this is not worth the risk where the whole suite would do (an env's
 * warm-up run).
 */
export const MAX_SELECTION_CHARS = 64 * 1024;

/**
 * Test ids that name a class alone, given the module of the test source declaring it
 * (`<module>/src/test/java/<package path>/<Class>.java`) when exactly one module has one; the
 * others as they were (a class of the root module, of no module found, or of two). Records that
 * name classes alone in a multi-module project (Multi-SWE-bench's dubbo and fastjson2) then build
 * the modules holding them and their upstream modules, not the whole reactor.
 * `testSources`: the project's test source files, relative to its root.
 */
export function qualifyJavaTests(ids: readonly string[], testSources: readonly string[]): string[] {
  const modulesOf = new Map<string, Set<string>>();
  for (const file of testSources) {
    const m = /^(?:(.+)\/)?src\/test\/java\/(.+)\.java$/.exec(file.replace(/^\.\//, ''));
    if (!m) continue;
    const fqn = m[2]!.replace(/\//g, '.');
    if (!modulesOf.has(fqn)) modulesOf.set(fqn, new Set());
    modulesOf.get(fqn)!.add(m[1] ?? '.');
  }
  return ids.map((id) => {
    const { module, pattern } = parseJavaTestId(id);
    if (module) return id;
    const found = modulesOf.get(javaTestClass(pattern).cls);
    const only = found?.size === 1 ? [...found][0]! : undefined;
    return only && only !== '.' ? `${only}:${id}` : id;
  });
}

/** Whether a test source of this test's class is among `testSources` (in its module, when it names one). */
export function javaTestExists(id: string, testSources: readonly string[]): boolean {
  const { module, cls } = javaTestClass(id);
  const file = `src/test/java/${cls.replace(/\./g, '/')}.java`;
  return testSources.some((f) => {
    const rel = f.replace(/^\.\//, '');
    return module ? rel === `${module}/${file}` : rel === file || rel.endsWith(`/${file}`);
  });
}
