import { ownValue } from '../../src/own.ts';

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
  /** Memory of a sandbox running its tests (MiB), when above the backend's default (2 GiB). */
  memoryMb?: number;
  /** Processes and threads a sandbox running its tests may hold at once, when above the backend's default. */
  pids?: number;
  /** Why the entry is what it is (shown in the README table and in task metadata). */
  note?: string;
}

export interface JavaSpec extends CommonSpec {
  language: 'java';
  /** The JDK the original harness used; another one is substituted with a note. */
  jdk: string;
  build: 'maven' | 'gradle';
  args: string[];
  /**
   * Tests a sandbox cannot run, whatever the patch (Maven: `Class#method`): left out of every run
   * and of FAIL_TO_PASS / PASS_TO_PASS; the note says why, and each verdict names them. A class
   * the records list is then judged on its other methods.
   */
  notRunHere?: string[];
  /** Why the instance cannot run on this machine at all (ENV_UNAVAILABLE with this reason, on every backend). */
  unavailable?: string;
  /** Maven: arguments of the env's warm-up build only (`JavaEnvSpec.warmArgs`). */
  warmArgs?: string[];
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

/** dubbo's builds skip checkstyle, RAT (license headers) and JaCoCo. */
const DUBBO_ARGS = ['-Dcheckstyle.skip=true', '-Drat.skip=true', '-Djacoco.skip=true'];

/** NetUtilsTest's address tests: they want a network interface besides loopback (below). */
const DUBBO_NOT_RUN = [
  'testGetLocalAddress',
  'testLocalHost',
  'testFindNetworkInterface',
  'testIgnoreGivenInterface',
  'testIgnoreGivenPrefixInterfaceName',
].map((m) => `org.apache.dubbo.common.utils.NetUtilsTest#${m}`);

/** Per repository, per version (`*`: any version): the spec. */
export const SPECS: Record<string, Record<string, RepoSpec>> = {
  'google/gson': {
    '*': maven('11', {
      // Poms of 2017-2019 set source/target 1.6 through ${java.version}; JDK 17's javac needs 7 or later.
      args: ['-Djava.version=1.7'],
      note: 'JDK 11 in SWE-bench-java; source/target 1.6 raised to 1.7 for JDK 17',
    }),
  },
  // Maven's JVM and Surefire's fork (default heap: a quarter of the host's memory) outgrow the
  // 2 GiB sandbox in the fuzz and large-document tests (the fork is killed, exit 137).
  'fasterxml/jackson-core': {
    '*': maven('11', { memoryMb: 6144, note: 'JDK 11 in the harness (17 used); 6 GiB sandboxes for the large-input tests' }),
  },
  // Its deep-nesting DoS tests (DeepArrayWrappingForDeser3590Test, 3621's) outgrow 2 GiB: the sandbox's limit killed Maven.
  'fasterxml/jackson-databind': {
    '*': maven('11', { memoryMb: 6144, note: 'JDK 11 in the harness (17 used); 6 GiB sandboxes for the deep-nesting tests' }),
  },
  'fasterxml/jackson-dataformat-xml': {
    '*': maven('11', { memoryMb: 6144, note: 'JDK 11 in the harness (17 used); 6 GiB sandboxes, as jackson-core' }),
  },
  // NetUtilsTest's address tests want a network interface besides loopback: the harness's
  // containers had Docker's bridge, a benchgym sandbox has no network at all, so they fail
  // whatever the patch (start state and gold alike). Left out; NetUtilsTest's other methods count.
  'apache/dubbo': {
    '*': maven('11', {
      args: DUBBO_ARGS,
      notRunHere: DUBBO_NOT_RUN,
      note:
        "NetUtilsTest's 5 address tests not run: they need a network interface besides " +
        "loopback, and a sandbox has no network (the harness's containers had Docker's bridge)",
    }),
  },
  // Maven's JVM itself is killed by the 2 GiB sandbox while Surefire runs thousands of classes.
  'alibaba/fastjson2': {
    '*': maven('11', {
      memoryMb: 6144,
      note: 'JDK 8 in Multi-SWE-bench, 11 in the table (17 used); 6 GiB sandboxes (Maven was killed at 2 GiB)',
    }),
  },
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
        replace:
          '<artifactId>bnd-maven-plugin</artifactId>\n        <version>4.0.0</version>\n ' +
          '       <executions>\n          <execution>\n            <phase>none</phase>',
      },
    ],
    note:
      'the pom hard-codes <release>6</release> (edited to 7) and ' +
      'bnd-maven-plugin 4.0.0 fails on JDK 17 (unbound), in a build-setup commit',
  },
};

/**
 * Jackson base commits whose parent pom (`com.fasterxml.jackson:jackson-base`) is a snapshot:
 * snapshots are not on Maven Central and the snapshot repository (oss.sonatype.org) is gone,
 * so the build cannot even read the pom. Multi-SWE-bench's harness rewrites the version to a
 * later snapshot of the same line; here it becomes the release that snapshot turned into
 * (jackson-core 3.0.0-SNAPSHOT of 2019, with no 3.0 parent on Central under this groupId,
 * gets 2.10.0, the release of that month; jackson-core-1133's 3.0.0-SNAPSHOT of 2023, under
 * `tools.jackson`, gets that group's 3.0.0 release of 2025). The project's own version is left
 * as it is.
 */
const JACKSON_SNAPSHOT_PARENTS: Record<string, [string, string]> = {
  'fasterxml__jackson-core-1309': ['2.17.2-SNAPSHOT', '2.17.2'],
  'fasterxml__jackson-core-1133': ['3.0.0-SNAPSHOT', '3.0.0'],
  'fasterxml__jackson-core-1263': ['2.18.0-SNAPSHOT', '2.18.0'],
  'fasterxml__jackson-core-1208': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-core-1204': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-core-1182': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-core-1172': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-core-1053': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-core-1016': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-core-980': ['2.15.0-rc3-SNAPSHOT', '2.15.0-rc3'],
  'fasterxml__jackson-core-973': ['2.15.0-rc3-SNAPSHOT', '2.15.0-rc3'],
  'fasterxml__jackson-core-964': ['2.15.0-rc2-SNAPSHOT', '2.15.0-rc2'],
  'fasterxml__jackson-core-922': ['2.15.0-SNAPSHOT', '2.15.0'],
  'fasterxml__jackson-core-891': ['2.15.0-SNAPSHOT', '2.15.0'],
  'fasterxml__jackson-core-894': ['2.14.2-SNAPSHOT', '2.14.2'],
  'fasterxml__jackson-core-729': ['2.14.0-SNAPSHOT', '2.14.0'],
  'fasterxml__jackson-core-566': ['3.0.0-SNAPSHOT', '2.10.0'],
  'fasterxml__jackson-dataformat-xml-644': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-dataformat-xml-638': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-dataformat-xml-590': ['2.15.0-rc3-SNAPSHOT', '2.15.0-rc3'],
  'fasterxml__jackson-dataformat-xml-544': ['2.14.0-SNAPSHOT', '2.14.0'],
  'fasterxml__jackson-dataformat-xml-531': ['2.14.0-SNAPSHOT', '2.14.0'],
  // jackson-databind: the parent of each base commit (the change's first parent, envs/swebench/reconstruct.ts) read from its pom.
  'fasterxml__jackson-databind-2036': ['2.9.6-SNAPSHOT', '2.9.6'],
  'fasterxml__jackson-databind-3371': ['2.14.0-SNAPSHOT', '2.14.0'],
  'fasterxml__jackson-databind-3509': ['2.14.0-SNAPSHOT', '2.14.0'],
  'fasterxml__jackson-databind-3560': ['2.14.0-SNAPSHOT', '2.14.0'],
  'fasterxml__jackson-databind-3621': ['2.13.5-SNAPSHOT', '2.13.5'],
  'fasterxml__jackson-databind-3625': ['2.14.0-SNAPSHOT', '2.14.0'],
  'fasterxml__jackson-databind-3626': ['2.14.0-SNAPSHOT', '2.14.0'],
  'fasterxml__jackson-databind-3666': ['2.14.1-SNAPSHOT', '2.14.1'],
  'fasterxml__jackson-databind-3701': ['2.14.2-SNAPSHOT', '2.14.2'],
  'fasterxml__jackson-databind-3716': ['2.14.2-SNAPSHOT', '2.14.2'],
  'fasterxml__jackson-databind-3851': ['2.15.0-rc3-SNAPSHOT', '2.15.0-rc3'],
  'fasterxml__jackson-databind-3860': ['2.15.0-rc3-SNAPSHOT', '2.15.0-rc3'],
  'fasterxml__jackson-databind-4013': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-databind-4015': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-databind-4048': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-databind-4050': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-databind-4072': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-databind-4087': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-databind-4131': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-databind-4132': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-databind-4159': ['2.16.0-rc1-SNAPSHOT', '2.16.0-rc1'],
  'fasterxml__jackson-databind-4186': ['2.16.0-SNAPSHOT', '2.16.0'],
  'fasterxml__jackson-databind-4189': ['2.15.4-SNAPSHOT', '2.15.4'],
  'fasterxml__jackson-databind-4219': ['2.16.1-SNAPSHOT', '2.16.1'],
  'fasterxml__jackson-databind-4228': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-databind-4230': ['2.16.1-SNAPSHOT', '2.16.1'],
  'fasterxml__jackson-databind-4249': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-databind-4257': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-databind-4265': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-databind-4304': ['2.15.4-SNAPSHOT', '2.15.4'],
  'fasterxml__jackson-databind-4311': ['2.16.2-SNAPSHOT', '2.16.2'],
  'fasterxml__jackson-databind-4320': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-databind-4325': ['2.16.2-SNAPSHOT', '2.16.2'],
  'fasterxml__jackson-databind-4338': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-databind-4360': ['2.16.2-SNAPSHOT', '2.16.2'],
  'fasterxml__jackson-databind-4365': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-databind-4426': ['2.17.0-SNAPSHOT', '2.17.0'],
  'fasterxml__jackson-databind-4468': ['2.17.1-SNAPSHOT', '2.17.1'],
  'fasterxml__jackson-databind-4469': ['2.17.1-SNAPSHOT', '2.17.1'],
  'fasterxml__jackson-databind-4486': ['2.17.1-SNAPSHOT', '2.17.1'],
  'fasterxml__jackson-databind-4487': ['2.18.0-SNAPSHOT', '2.18.0'],
  'fasterxml__jackson-databind-4609': ['2.18.0-SNAPSHOT', '2.18.0'],
  'fasterxml__jackson-databind-4615': ['2.18.0-SNAPSHOT', '2.18.0'],
  'fasterxml__jackson-databind-4641': ['2.18.0-SNAPSHOT', '2.18.0'],
};

for (const [id, [snapshot, release]] of Object.entries(JACKSON_SNAPSHOT_PARENTS)) {
  const parent = (v: string) => `<artifactId>jackson-base</artifactId>\n    <version>${v}</version>`;
  INSTANCE_SPECS[id] = {
    edits: [{ file: 'pom.xml', find: parent(snapshot), replace: parent(release) }],
    note: `parent jackson-base ${snapshot} is not on Maven Central (snapshots are gone): ${release} used, in a build-setup commit`,
  };
}

// Reflective access into java.util that the harness's JDK allowed (11: with a warning; 8:
// freely) and JDK 17 refuses, opened to the test fork (the Surefire configs set no argLine):
// dataformat-xml-531's and -544's ListAsObjectTest binds a LinkedList by its fields;
// fastjson2-1245's DubboTest6#testEnumSet (its FAIL_TO_PASS) reads EnumSet.elementType.
for (const [id, jdk] of [
  ['fasterxml__jackson-dataformat-xml-531', '11'],
  ['fasterxml__jackson-dataformat-xml-544', '11'],
  ['alibaba__fastjson2-1245', '8'],
] as const) {
  INSTANCE_SPECS[id] = {
    ...INSTANCE_SPECS[id],
    args: ['-DargLine=--add-opens=java.base/java.util=ALL-UNNAMED'],
    note: [INSTANCE_SPECS[id]?.note, `java.util opened to the test fork (--add-opens; JDK ${jdk}, the harness's, allowed this access)`]
      .filter(Boolean)
      .join('; '),
  };
}

// dubbo 2.7 (7041's base: 2.7.9; 9187's: 2.7.16-SNAPSHOT) predates its poms' JDK 15+ profile, which
// opens java.lang, java.math and java.util to the test fork for javassist's ClassLoader.defineClass
// and PojoUtils' reflection into Throwable (JDK 11, the harness's, allowed it with a warning): the
// same opens through the `argline` property its Surefire argLine is made of, with the pom's own
// options kept.
for (const id of ['apache__dubbo-7041', 'apache__dubbo-9187']) {
  INSTANCE_SPECS[id] = {
    args: [
      ...DUBBO_ARGS,
      '-Dargline=-server -Xms256m -Xmx512m -Dfile.encoding=UTF-8 -Djava.net.preferIPv4Stack=true ' +
        '-XX:MetaspaceSize=64m -XX:MaxMetaspaceSize=128m --add-opens=java.base/java.lang=ALL-UNNAMED ' +
        '--add-opens=java.base/java.math=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED',
    ],
    note:
      'java.lang, java.math and java.util opened to the test fork (later dubbo ' +
      "poms' jdk15ge profile; JDK 11, the harness's, allowed this access)",
  };
}

// dubbo-10638 (3.1): its FAIL_TO_PASS classes are all new in the test patch, so the env's warm-up
// would run the reactor's whole suite (past 20 minutes here). It compiles every module and runs one
// test instead (Surefire's provider resolved; each module's test dependencies were resolved when
// its tests compiled), without dubbo-native-plugin, which compiles against the shaded `dubbo` jar
// only `package` makes: a `test` build of the reactor cannot make it, and no test lives there.
// Its PASS_TO_PASS ServiceDefinitionBuilderTest (one method, testBuilderComplexObject) passes only after another
// test of the JVM made a FrameworkModel (which fills TypeDefinitionBuilder.BUILDERS): in the
// module's whole suite, org.apache.dubbo.common's tests run first; in the records' classes alone
// it runs before FrameworkModelTest and throws a NullPointerException, start state and gold alike.
// dubbo-rpc-rest's RestProtocolTest starts Jetty servers whose thread pools pass a sandbox's default
// pids (1,024 locally, 512 on Docker; the harness's containers had no limit): 4,096.
// Its records' classes are not all in one module each, so its runs build the whole reactor, which
// without dubbo-native-plugin exits 0 when every test passed (with it: 1, the gold's build too).
INSTANCE_SPECS['apache__dubbo-10638'] = {
  pids: 4096,
  args: [...DUBBO_ARGS, '-pl', '!:dubbo-native-plugin'],
  warmArgs: ['-Dtest=org.apache.dubbo.common.URLBuilderTest', '-Dsurefire.failIfNoSpecifiedTests=false', '-DfailIfNoTests=false'],
  notRunHere: [...DUBBO_NOT_RUN, 'org.apache.dubbo.metadata.definition.ServiceDefinitionBuilderTest'],
  note:
    'every build leaves dubbo-native-plugin out (it compiles against the shaded dubbo jar only `package` ' +
    "makes); the env's warm-up runs one test, not the whole suite; ServiceDefinitionBuilderTest (its one " +
    'method) not run: it passes only after another test made a FrameworkModel (TypeDefinitionBuilder.BUILDERS ' +
    "is null before), which the module's whole suite does first and the records' classes alone do not; 4,096 " +
    "pids: dubbo-rpc-rest's Jetty tests start more threads than a sandbox's default allows",
};

// dubbo-11781's FAIL_TO_PASS holds 6 ZooKeeper test classes (registry, remoting, metadata). Their
// JUnit listener (dubbo-test-check's DownloadZookeeperInitializer) downloads a ZooKeeper server,
// apache-zookeeper-3.6.0-bin.tar.gz from archive.apache.org, when the tests start: no sandbox has
// network, and that host is not reachable from this machine (Maven Central has no such archive).
INSTANCE_SPECS['apache__dubbo-11781'] = {
  unavailable:
    'its FAIL_TO_PASS runs ZooKeeper tests whose JUnit listener (dubbo-test-check) downloads a ZooKeeper server from ' +
    'archive.apache.org when they start: a sandbox has no network, and that host is not reachable from this machine',
};

// jackson-core of 2014-2017 compiles for Java 6 (`javac.src.version` / `javac.target.version`
// of jackson-parent 2.5 and of the 2017 pom), which JDK 17's javac refuses: raised to 7.
for (const id of [
  'fasterxml__jackson-core-174',
  'fasterxml__jackson-core-183',
  'fasterxml__jackson-core-370',
  'fasterxml__jackson-core-380',
]) {
  INSTANCE_SPECS[id] = {
    args: ['-Djavac.src.version=1.7', '-Djavac.target.version=1.7'],
    note: 'source/target 1.6 (javac.src.version / javac.target.version) raised to 1.7 for JDK 17',
  };
}

// jackson-core-729 (2022, 2.14) still sets javac.src.version / target 1.6 in its own pom; 566
// (the 3.0.0-SNAPSHOT line of 2019, parent mapped to 2.10.0 whose default is 1.7) uses static
// and default interface methods, Java 8: each found `ENV_BUILD_FAILED` by validate on JDK 17.
for (const [id, level] of [
  ['fasterxml__jackson-core-729', '1.7'],
  ['fasterxml__jackson-core-566', '1.8'],
] as const) {
  INSTANCE_SPECS[id] = {
    ...INSTANCE_SPECS[id],
    args: [`-Djavac.src.version=${level}`, `-Djavac.target.version=${level}`],
    note: [INSTANCE_SPECS[id]?.note, `source/target (javac.src.version / javac.target.version) set to ${level} for JDK 17`]
      .filter(Boolean)
      .join('; '),
  };
}

// jackson-databind of 2016-2018 (2.6-2.9) has a class `Module`, which javac 9+ finds ambiguous with
// `java.lang.Module` when it compiles for source 1.6 / 1.7 against its own class library ("reference
// to Module is ambiguous"; the oss-parent pins maven-compiler-plugin 3.2, which has no `release`):
// the compiler plugin 3.8.1 with `<release>8</release>` (Java 8's API: no java.lang.Module), in
// the build-setup commit. Every one of these base poms opens its build with the same lines.
const DATABIND_RELEASE_8: BuildEdit = {
  file: 'pom.xml',
  find: '  <build>\n     <plugins>\n',
  replace:
    '  <build>\n     <plugins>\n' +
    '      <plugin>\n        <groupId>org.apache.maven.plugins</groupId>\n        <artifactId>maven-compiler-plugin</artifactId>\n' +
    '        <version>3.8.1</version>\n        <configuration>\n        ' +
    '  <release>8</release>\n        </configuration>\n      </plugin>\n',
};
for (const id of [
  'fasterxml__jackson-databind-1113',
  'fasterxml__jackson-databind-1650',
  'fasterxml__jackson-databind-1923',
  'fasterxml__jackson-databind-2036',
]) {
  const before = INSTANCE_SPECS[id];
  INSTANCE_SPECS[id] = {
    ...before,
    edits: [...(before?.edits ?? []), DATABIND_RELEASE_8],
    note: [
      before?.note,
      'compiled with --release 8 (maven-compiler-plugin 3.8.1): javac 17 finds `Module` ambiguous with java.lang.Module for source 1.7',
    ]
      .filter(Boolean)
      .join('; '),
  };
}

// jackson-core-1133 (the 3.0 line of 2023) names de.jjohannes' gradle-module-metadata plugin without a
// version, which the 3.0.0 parent it gets (above) manages no more (it moved to org.gradlex), and that
// parent's enforcer refuses an unversioned plugin before anything compiles: the enforcer is skipped.
INSTANCE_SPECS['fasterxml__jackson-core-1133'] = {
  ...INSTANCE_SPECS['fasterxml__jackson-core-1133'],
  args: ['-Denforcer.skip=true'],
  note: [
    INSTANCE_SPECS['fasterxml__jackson-core-1133']?.note,
    "the enforcer is skipped: the 3.0.0 parent's refuses the pom's unversioned gradle-module-metadata plugin",
  ]
    .filter(Boolean)
    .join('; '),
};

// jackson-databind-3622 (a backport to the 2.12 branch) activates its `java14+` profile on any JDK from
// 14 on, which compiles the record tests for release 14 with --enable-preview: JDK 17 refuses preview
// features of an older release. Off, as it was on the harness's JDK 11 (its tests are not records').
INSTANCE_SPECS['fasterxml__jackson-databind-3622'] = {
  ...INSTANCE_SPECS['fasterxml__jackson-databind-3622'],
  args: ['-P!java14+'],
  note: "the java14+ profile (release 14 with --enable-preview, refused by JDK 17) is off, as on the harness's JDK 11",
};

/** The spec used for a repository the table does not know: Maven on the default JDK. */
export const DEFAULT_SPEC: JavaSpec = maven('17', { note: 'no spec for this repository: Maven with JDK 17 assumed' });

/**
 * The spec of one instance: instance override over repository version over repository `*`
 * over the default; `extra` (a table in the same shape, e.g. a user's own repositories)
 * is consulted before the built-in one.
 */
export function specFor(
  repo: string,
  version: string,
  instanceId: string,
  extra: Record<string, Record<string, RepoSpec>> = {},
): RepoSpec & { known: boolean } {
  const find = (table: Record<string, Record<string, RepoSpec>>) =>
    ownValue(table, repo) ?? Object.entries(table).find(([k]) => k.toLowerCase() === repo.toLowerCase())?.[1];
  const byVersion = find(extra) ?? find(SPECS);
  const base = ownValue(byVersion, version) ?? ownValue(byVersion, '*');
  const override = ownValue(INSTANCE_SPECS, instanceId) ?? {};
  const spec = { ...(base ?? DEFAULT_SPEC), ...override, known: Boolean(base) } as RepoSpec & { known: boolean };
  // An instance's note adds to its repository's (both reasons hold).
  const note = [...new Set([(base ?? DEFAULT_SPEC).note, override.note].filter(Boolean))].join('; ');
  return note ? { ...spec, note } : spec;
}
