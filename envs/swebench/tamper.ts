import { matchesAny } from '../../src/sandbox/glob.ts';

/**
 * Python instances' test infrastructure: files that configure how pytest finds, runs or
 * reports tests rather than what the code does. A candidate patch may not change them (its
 * changes are undone), and changes to build files that configure pytest are reverted. Java
 * instances need none of this: their whole build configuration scores as the start state has
 * it (src/scoring/java_guard.ts).
 */
export const TEST_INFRA_FILES = ['**/conftest.py', 'pytest.ini', '.pytest.ini', 'tox.ini'];

/** Build files, whose changes are allowed unless they touch how tests run. */
export const BUILD_FILES = ['setup.cfg', 'pyproject.toml'];

/** Changed build-file lines that configure pytest: a build-file change with any of these is reverted (the fix itself never needs one). */
const TEST_CONFIG = [
  /\[tool\.pytest|\[tool:pytest\]|\baddopts\b|\btestpaths\b/,
  /\bpython_(files|classes|functions)\b|norecursedirs|-p\s+no:/,
];

/** The changed lines (`+`/`-`, not headers) of a unified diff that configure tests, if any. */
export function testConfigLines(diff: string): string[] {
  const out: string[] = [];
  for (const line of diff.split('\n')) {
    if (!/^[+-]/.test(line) || /^(\+\+\+|---) /.test(line)) continue;
    if (TEST_CONFIG.some((re) => re.test(line))) out.push(line.slice(0, 200));
  }
  return out;
}

export function isTestInfraFile(rel: string): boolean {
  return matchesAny(rel, TEST_INFRA_FILES);
}

export function isBuildFile(rel: string): boolean {
  return matchesAny(rel, BUILD_FILES);
}
