/**
 * How to build and test each repository version, like the SWE-bench harness's
 * MAP_REPO_VERSION_TO_SPECS: the JDK (or Python), the build tool, `-D` overrides every build
 * and test command gets, build-setup edits (for poms a current JDK rejects), which files
 * count as tests, and the time limit. A Python SWE-bench repository is another entry of the
 * same table (see `PythonSpec`); nothing else in the adapter changes.
 */

export interface BuildEdit {
  file: string;
  find: string;
  replace: string;
}

interface CommonSpec {
  /** Globs of test files: the agent's changes to them are reset before scoring. */
  testFiles: string[];
  /** Time limit of one test run, ms. */
  timeoutMs: number;
  /** Build-setup edits committed on top of the base (see WorkspaceSource `git`). */
  edits: BuildEdit[];
  /** Why the entry is what it is (shown in the README table and in task metadata). */
  note?: string;
}

export interface JavaSpec extends CommonSpec {
  language: 'java';
  /** The JDK the original harness used; another one is substituted with a note. */
  jdk: string;
  build: 'maven' | 'gradle';
  args: string[];
}

export interface PythonSpec extends CommonSpec {
  language: 'python';
  python: string;
  requirements: string[];
  /** pytest arguments before the test ids. */
  pytestArgs: string[];
}

export type RepoSpec = JavaSpec | PythonSpec;

const JAVA_TESTS = ['**/src/test/**', '**/src/it/**', '**/src/testFixtures/**'];

function maven(jdk: string, extra: Partial<JavaSpec> = {}): JavaSpec {
  return { language: 'java', jdk, build: 'maven', args: [], edits: [], testFiles: JAVA_TESTS, timeoutMs: 30 * 60_000, ...extra };
}

function gradle(jdk: string, extra: Partial<JavaSpec> = {}): JavaSpec {
  return { ...maven(jdk, extra), build: 'gradle', ...extra };
}

/** Per repository, per version (`*`: any version): the spec. */
export const SPECS: Record<string, Record<string, RepoSpec>> = {
  'google/gson': {
    '*': maven('11', {
      // Poms of 2017-2019 set source/target 1.6 through ${java.version}; JDK 17's javac needs 7 or later.
      args: ['-Djava.version=1.7'],
      note: 'JDK 11 in SWE-bench-java; source/target 1.6 raised to 1.7 for JDK 17',
    }),
  },
  'fasterxml/jackson-core': { '*': maven('11') },
  'fasterxml/jackson-databind': { '*': maven('11') },
  'fasterxml/jackson-dataformat-xml': { '*': maven('11') },
  'apache/dubbo': { '*': maven('11', { args: ['-Dcheckstyle.skip=true', '-Drat.skip=true', '-Djacoco.skip=true'] }) },
  'alibaba/fastjson2': { '*': maven('11') },
  'mockito/mockito': { '*': gradle('11') },
  'googlecontainertools/jib': { '*': gradle('11') },
  'google/guava': { '*': maven('11') },
  'elastic/logstash': { '*': gradle('11') },
  'alibaba/nacos': { '*': maven('11') },
  'apache/rocketmq': { '*': maven('11') },
};

/** Instance-level overrides, where one base commit differs from its repository's version. */
export const INSTANCE_SPECS: Record<string, Partial<RepoSpec>> = {
  // The 2019 pom hard-codes <release>6</release> (a -D cannot override a literal): raised to 7.
  // bnd-maven-plugin 4.0.0 (OSGi manifest, bound to process-classes) throws a
  // ConcurrentModificationException on JDK 17; tests do not need the manifest: unbound.
  'google__gson-1555': {
    edits: [
      { file: 'pom.xml', find: '<release>6</release>', replace: '<release>7</release>' },
      {
        file: 'gson/pom.xml',
        find: '<artifactId>bnd-maven-plugin</artifactId>\n        <version>4.0.0</version>\n        <executions>\n          <execution>',
        replace: '<artifactId>bnd-maven-plugin</artifactId>\n        <version>4.0.0</version>\n        <executions>\n          <execution>\n            <phase>none</phase>',
      },
    ],
    note: 'the pom hard-codes <release>6</release> (edited to 7) and bnd-maven-plugin 4.0.0 fails on JDK 17 (unbound), in a build-setup commit',
  },
};

/** The spec used for a repository the table does not know: Maven on the default JDK. */
export const DEFAULT_SPEC: JavaSpec = maven('17', { note: 'no spec for this repository: Maven with JDK 17 assumed' });

/**
 * The spec of one instance: instance override over repository version over repository `*`
 * over the default; `extra` (a table in the same shape, e.g. a user's own repositories)
 * is consulted before the built-in one.
 */
export function specFor(repo: string, version: string, instanceId: string, extra: Record<string, Record<string, RepoSpec>> = {}): RepoSpec & { known: boolean } {
  const find = (table: Record<string, Record<string, RepoSpec>>) => table[repo] ?? Object.entries(table).find(([k]) => k.toLowerCase() === repo.toLowerCase())?.[1];
  const byVersion = find(extra) ?? find(SPECS);
  const base = byVersion?.[version] ?? byVersion?.['*'];
  const override = INSTANCE_SPECS[instanceId] ?? {};
  return { ...(base ?? DEFAULT_SPEC), ...override, known: Boolean(base) } as RepoSpec & { known: boolean };
}
