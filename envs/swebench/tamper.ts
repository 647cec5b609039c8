import { matchesAny } from '../../src/sandbox/glob.ts';

/**
 * Files that configure how tests are found, run or reported rather than what the code does.
 * A candidate patch may not change them: JUnit Platform settings (extension autodetection,
 * deactivated conditions), service registrations of JUnit and Surefire (listeners and
 * extensions that could rewrite results), Maven and Gradle wrappers and their configuration
 * (`.mvn/maven.config` can add `-DskipTests`).
 */
export const TEST_INFRA_FILES = [
  '**/junit-platform.properties',
  '**/META-INF/services/org.junit.**',
  '**/META-INF/services/org.apache.maven.surefire.**',
  '**/META-INF/services/org.testng.**',
  '.mvn/**',
  'mvnw',
  'mvnw.cmd',
  'gradlew',
  'gradlew.bat',
  'gradle/wrapper/**',
  '**/surefire*.properties',
  // pytest: hooks and configuration files that decide what runs and what passes.
  '**/conftest.py',
  'pytest.ini',
  '.pytest.ini',
  'tox.ini',
];

/** Build files, whose changes are allowed unless they touch how tests run. */
export const BUILD_FILES = ['**/pom.xml', 'pom.xml', '**/*.gradle', '*.gradle', '**/*.gradle.kts', '*.gradle.kts', '**/gradle.properties', 'gradle.properties', 'setup.cfg', 'pyproject.toml'];

/**
 * Changed build-file lines that skip, filter or ignore tests, or reconfigure the test runner:
 * a build-file change with any of these is reverted (the fix itself never needs one).
 */
const TEST_CONFIG = [
  /skipTests|maven\.test\.skip|skipITs|<skip>\s*true|<skipExec>/i,
  /testFailureIgnore|test\.failure\.ignore|ignoreFailures|failIfNoTests|failIfNoSpecifiedTests/i,
  /surefire|failsafe|junit-platform|<argLine>|argLine|javaagent|<forkCount>|<reuseForks>/i,
  /<excludes?>|<includes?>|<test>|<groups>|<excludedGroups>|<testSourceDirectory>|<testResources?>|<testClassesDirectory>/i,
  /\btest\s*\{|tasks\.(named|withType)\s*\(?\s*["']?[Tt]est|useJUnit|onlyIf|enabled\s*=\s*false|exclude\s*['"(]|filter\s*\{|testLogging|systemPropert/,
  /maven\.test\.|surefire\.|junit\.jupiter\.|junit\.platform\./i,
  /<extensions?>|<extension>/i,
  /\[tool\.pytest|\[tool:pytest\]|\baddopts\b|\btestpaths\b|\bpython_(files|classes|functions)\b|norecursedirs|-p\s+no:/,
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
