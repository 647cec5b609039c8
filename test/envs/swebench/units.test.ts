import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { covers, decideSwebench, instanceTask, readInstances, specFor, swebenchSuite } from '../../../envs/swebench/index.ts';
import { datasetFiles } from '../../../envs/swebench/index.ts';
import { diffFiles } from '../../../envs/swebench/patches.ts';
import { resolvedRates } from '../../../envs/swebench/replay.ts';
import { killLines } from '../../../envs/swebench/scorer.ts';
import { isBuildFile, isTestInfraFile, testConfigLines } from '../../../envs/swebench/tamper.ts';
import { gradleCommand, mavenCommand, type TestRun } from '../../../src/scoring/runners.ts';
import { parseJavaTestId } from '../../../src/tasks/java_tests.ts';
import { expectGymError, tempDir } from '../../helpers.ts';
import { SWEBENCH_JAVA_DIR } from './data.ts';

const DATA = SWEBENCH_JAVA_DIR;
const GSON = path.join(DATA, 'google__gson_swe-bench-java_reconstructed.jsonl');
const MULTI = path.join(DATA, 'multi-swe-bench-bytedance-java');
const NO_DATA = existsSync(GSON) ? false : `the SWE-bench-java data is not at ${DATA}`;

describe('swe-bench-java: the adapter', () => {
  test(
    'reads the SWE-bench schema: the 5 gson instances, FAIL_TO_PASS from JSON strings, spec and build setup',
    { skip: NO_DATA },
    async () => {
      const tasks = await swebenchSuite({ reposDir: '/nowhere', allowNetwork: false }).load(GSON);
      assert.deepEqual(
        tasks.map((t) => t.id),
        ['google__gson-1093', 'google__gson-1391', 'google__gson-1555', 'google__gson-1703', 'google__gson-1787'],
      );
      const t = tasks[0]!;
      assert.deepEqual(t.tests.failToPass, ['gson:com.google.gson.stream.JsonWriterTest']);
      assert.deepEqual(t.workspace, {
        type: 'git',
        repo: 'google/gson',
        commit: '0aaef0fd1bb1b9729543dc40168adfb829eb75a4',
        reposDir: '/nowhere',
        allowNetwork: false,
        edits: [],
      });
      // The env is warmed by the instance's hidden tests, not gson's whole suite.
      assert.deepEqual(t.env, {
        kind: 'java',
        jdk: '11',
        build: 'maven',
        args: ['-Djava.version=1.7'],
        warmTests: ['gson:com.google.gson.stream.JsonWriterTest'],
      });
      assert.match(t.prompt, /^<issue>\nJsonWriter#value\(java\.lang\.Number\) can be lenient/);
      assert.ok(t.tests.hidden.patch?.startsWith('diff --git a/gson/src/test/java/com/google/gson/stream/JsonWriterTest.java'));
      assert.ok(!JSON.stringify(t.metadata).includes('diff --git'), 'no patch in the public metadata');
      // Sandboxes hide the dataset's folder (gold and test patches) and the mirrors (the future).
      assert.deepEqual(swebenchSuite({ reposDir: '/mirrors' }).privatePaths(GSON), [DATA, '/mirrors']);
      const t1555 = tasks.find((x) => x.id === 'google__gson-1555')!;
      assert.equal(t1555.workspace.type === 'git' && t1555.workspace.edits.length, 2);
    },
  );

  test(
    'reads the Multi-SWE-bench record schema: 50 records of 8 repositories, f2p/s2p/n2p as fail-to-pass',
    { skip: NO_DATA },
    async () => {
      const files = await datasetFiles(MULTI);
      assert.equal(files.length, 8);
      const all = (await Promise.all(files.map((f) => readInstances(f)))).flat();
      assert.equal(all.length, 50);
      assert.ok(all.every((i) => i.schema === 'multi-swe-bench' && i.failToPass.length > 0 && /^[0-9a-f]{40}$/.test(i.baseCommit)));
      const gson = all.find((i) => i.instanceId === 'google__gson-1787')!;
      assert.equal(gson.repo, 'google/gson');
      assert.equal(gson.baseCommit, 'e614e71ee43ca7bc1cb466bd1eaf4d85499900d9');
      assert.match(gson.problemStatement, /^TypeAdapterRuntimeTypeWrapper prefers cyclic adapter/);
      const jib = all.find((i) => i.repo === 'googlecontainertools/jib')!;
      assert.equal(
        specFor(jib.repo, jib.version, jib.instanceId).language === 'java' && (specFor(jib.repo, '', '') as { build: string }).build,
        'gradle',
      );
    },
  );

  test('bad rows are refused naming the row and the field', async () => {
    const dir = await tempDir('benchgym-swb-rows-');
    try {
      const file = path.join(dir, 'bad.jsonl');
      await fs.writeFile(
        file,
        JSON.stringify({
          instance_id: 'x',
          repo: 'a/b',
          base_commit: 'abc',
          patch: '',
          test_patch: 'd',
          problem_statement: 'p',
          FAIL_TO_PASS: '[]',
        }) + '\n',
      );
      await expectGymError(readInstances(file), 'TASK_INVALID', /bad\.jsonl:1: invalid SWE-bench row: 'base_commit': a full commit hash/);
      await fs.writeFile(
        file,
        JSON.stringify({
          instance_id: 'x',
          repo: 'a/b',
          base_commit: 'a'.repeat(40),
          patch: '',
          test_patch: 'd',
          problem_statement: 'p',
          FAIL_TO_PASS: 'not json',
        }) + '\n',
      );
      await expectGymError(readInstances(file), 'TASK_INVALID', /'FAIL_TO_PASS': expected a JSON list of test ids/);
      await fs.writeFile(
        file,
        JSON.stringify({ org: 'a', repo: 'b', number: 1, base: { sha: 'a'.repeat(40) }, fix_patch: '', test_patch: 'd' }) + '\n',
      );
      await expectGymError(readInstances(file), 'TASK_INVALID', /instance a__b-1 has no fail-to-pass tests/);
      await expectGymError(swebenchSuite().load(path.join(dir, 'missing.jsonl')), 'SUITE_NOT_FOUND', /does not exist/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('specs: repository and version, instance overrides, a default for unknown repositories', () => {
    assert.equal(specFor('google/gson', '0.1', 'google__gson-1093').known, true);
    assert.equal(specFor('google/gson', '0.1', 'google__gson-1555').edits[0]!.replace, '<release>7</release>');
    const unknown = specFor('someone/else', '1', 'x');
    assert.equal(unknown.known, false);
    assert.equal(unknown.language === 'java' && unknown.jdk, '17');
  });
});

describe("swe-bench-java: the scorer's parts", () => {
  test("killLines: the last three kill lines of a run's log, a shell's whole-command line clipped", () => {
    const command = `mvn -o test '-Dtest=${Array.from({ length: 2700 }, (_, i) => `com.acme.T${i}`).join(',')}'`;
    const killed = `/bin/bash: line 1:   101 Killed                  ${command}`;
    const log = ['[INFO] Building core', 'Tests run: 3', killed, 'BUILD FAILURE'].join('\n');
    const quoted = killLines(log);
    assert.ok(quoted.length < 400, `${quoted.length} characters`);
    assert.match(quoted, /^\/bin\/bash: line 1: +101 Killed +mvn -o test '-Dtest=com\.acme\.T0,/);
    assert.match(quoted, new RegExp(`… \\(${killed.length - 240} more characters\\)$`));
    assert.equal(
      killLines('a\nThe forked VM terminated without saying goodbye\nb\nexit code 137'),
      'The forked VM terminated without saying goodbye | exit code 137',
    );
    assert.equal(killLines('nothing of the kind'), '');
  });
  test('diffFiles: modified, added, deleted, renamed; git and plain headers', () => {
    const patch = [
      'diff --git a/a/M.java b/a/M.java',
      'index 1..2 100644',
      '--- a/a/M.java',
      '+++ b/a/M.java',
      '@@ -1 +1 @@',
      '-x',
      '+y',
      'diff --git a/N.java b/N.java',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/N.java',
      '@@ -0,0 +1 @@',
      '+n',
      'diff --git a/D.java b/D.java',
      'deleted file mode 100644',
      '--- a/D.java',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-d',
      'diff --git a/old.txt b/new.txt',
      'similarity index 100%',
      'rename from old.txt',
      'rename to new.txt',
      '--- plain/P.java\t2024-01-01',
      '+++ plain/P.java\t2024-01-01',
      '@@ -1 +1 @@',
      '-p',
      '+q',
    ].join('\n');
    assert.deepEqual(diffFiles(patch), [
      { oldPath: 'a/M.java', newPath: 'a/M.java', status: 'modified' },
      { oldPath: null, newPath: 'N.java', status: 'added' },
      { oldPath: 'D.java', newPath: null, status: 'deleted' },
      { oldPath: 'old.txt', newPath: 'new.txt', status: 'renamed' },
      { oldPath: 'plain/P.java', newPath: 'plain/P.java', status: 'modified' },
    ]);
  });

  test(
    "Python instances' test infrastructure and pytest configuration " + "in build files are recognised (Java's are the build guard's)",
    () => {
      assert.ok(
        isTestInfraFile('conftest.py') &&
          isTestInfraFile('src/pkg/conftest.py') &&
          isTestInfraFile('tox.ini') &&
          isTestInfraFile('pytest.ini'),
      );
      for (const f of ['src/main/java/Foo.java', '.mvn/maven.config', 'src/test/resources/junit-platform.properties'])
        assert.ok(!isTestInfraFile(f), f);
      assert.ok(isBuildFile('pyproject.toml') && isBuildFile('setup.cfg') && !isBuildFile('pom.xml'));
      assert.equal(testConfigLines('+[tool.pytest.ini_options]\n+addopts = "-p no:warnings"\n+requires = ["x"]\n').length, 2);
      assert.deepEqual(testConfigLines('+    <artifactId>guava</artifactId>\n+[metadata]\n'), []);
    },
  );

  test(
    "a Java instance declares its gold patch's build-file sections (guava-2945's poms); one without keeps none",
    { skip: NO_DATA },
    async () => {
      const inst = (await readInstances(GSON))[0]!;
      assert.equal(instanceTask('swe-bench-java', inst).tests.hidden.buildPatch, undefined, 'gson-1093 changes no build file');
      const pom = 'diff --git a/gson/pom.xml b/gson/pom.xml\n--- a/gson/pom.xml\n+++ b/gson/pom.xml\n@@ -1 +1 @@\n-<v>1</v>\n+<v>2</v>\n';
      const task = instanceTask('swe-bench-java', { ...inst, patch: `${pom}${inst.patch}` });
      assert.equal(task.tests.hidden.buildPatch, pom);
      assert.equal(task.solution?.patch, `${pom}${inst.patch}`, 'the gold patch is kept whole');
      const guava = (await readInstances(path.join(MULTI, 'google__guava_dataset.jsonl'))).find(
        (i) => i.instanceId === 'google__guava-2945',
      )!;
      assert.deepEqual(
        diffFiles(instanceTask('swe-bench-java', guava).tests.hidden.buildPatch ?? '').map((f) => f.newPath),
        ['android/guava/pom.xml', 'android/pom.xml', 'guava-gwt/pom.xml', 'guava/pom.xml', 'pom.xml'],
      );
    },
  );

  test('covers: classes, methods, parameterised and nested tests, modules, Gradle module tasks', () => {
    assert.ok(covers('gson:com.g.FooTest', 'gson:com.g.FooTest#testA'));
    assert.ok(covers('com.g.FooTest', 'gson:com.g.FooTest#testA'), 'an id without a module matches any module');
    assert.ok(!covers('extras:com.g.FooTest', 'gson:com.g.FooTest#testA'));
    assert.ok(covers('com.g.FooTest', 'com.g.FooTest$Inner#testA'));
    assert.ok(!covers('com.g.FooTest', 'com.g.FooTestMore#testA'));
    assert.ok(covers('com.g.FooTest#testA', 'com.g.FooTest#testA[1]'));
    assert.ok(covers('com.g.FooTest#testA', 'com.g.FooTest#testA(String)[2]'));
    assert.ok(!covers('com.g.FooTest#testA', 'com.g.FooTest#testAB'));
    assert.ok(covers('jib-cli:test', 'jib-cli:com.g.CliTest#x'));
    // Python: pytest node ids, by themselves or by a file / class / parametrised prefix.
    assert.ok(covers('tests/test_a.py', 'tests/test_a.py::test_x', 'python'));
    assert.ok(covers('tests/test_a.py::TestC', 'tests/test_a.py::TestC::test_x', 'python'));
    assert.ok(covers('tests/test_a.py::test_x', 'tests/test_a.py::test_x[1-2]', 'python'));
    assert.ok(!covers('tests/test_a.py::test_x', 'tests/test_a.py::test_xy', 'python'));
  });

  test('the decision: listed tests from the reports, not-run tests fail, a failing build is not believed', () => {
    const run = (tests: [string, 'passed' | 'failed' | 'skipped'][], exitCode = 0, timedOut = false): TestRun => ({
      command: 'mvn',
      exec: {
        exitCode,
        stdout: '',
        stderr: '',
        timedOut,
        truncated: { stdout: 0, stderr: 0 },
        totalBytes: { stdout: 0, stderr: 0 },
        durationMs: 1,
      },
      tests: tests.map(([name, status]) => ({ name, status })),
      log: '',
    });
    const lists = { failToPass: ['m:a.T#x'], passToPass: ['m:a.U'] };
    const ok = decideSwebench(
      run([
        ['m:a.T#x', 'passed'],
        ['m:a.U#y', 'passed'],
        ['m:a.U#z', 'skipped'],
      ]),
      lists,
      [],
    );
    assert.equal(ok.reward, 1);
    const mismatch = decideSwebench(
      run(
        [
          ['m:a.T#x', 'passed'],
          ['m:a.U#y', 'passed'],
        ],
        1,
      ),
      lists,
      [],
    );
    assert.equal(mismatch.reward, 0);
    assert.ok(mismatch.notes.some((n) => n.startsWith('EXIT_CODE_MISMATCH')));
    const missing = decideSwebench(run([['m:a.T#x', 'passed']]), lists, []);
    assert.deepEqual(missing.passToPass, { passed: [], failed: ['m:a.U'] });
    assert.ok(missing.notes.some((n) => /did not run \(no report\): m:a\.U/.test(n)));
    const onlySkipped = decideSwebench(
      run([
        ['m:a.T#x', 'skipped'],
        ['m:a.U#y', 'passed'],
      ]),
      lists,
      [],
    );
    assert.equal(onlySkipped.reward, 0, 'a skipped fail-to-pass test did not pass');
    assert.equal(
      decideSwebench(
        run(
          [
            ['m:a.T#x', 'passed'],
            ['m:a.U#y', 'passed'],
          ],
          0,
          true,
        ),
        lists,
        [],
      ).reward,
      0,
    );
  });

  test('test selection: Maven -pl/-am and -Dtest, Gradle tasks and --tests', () => {
    assert.deepEqual(parseJavaTestId('gson:com.g.FooTest#a'), { module: 'gson', pattern: 'com.g.FooTest#a' });
    assert.deepEqual(parseJavaTestId('com.g.FooTest'), { pattern: 'com.g.FooTest' });
    assert.equal(
      mavenCommand('mvn', ['core:a.T#x', 'app:b.U'], ['-Djava.version=1.7']),
      'mvn -o -B -Dstyle.color=never -Djava.version=1.7 -pl core,app -am ' +
        "'-Dtest=a.T#x,b.U' -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false test",
    );
    assert.equal(
      mavenCommand('mvn', ['a.T', 'core:b.U']),
      'mvn -o -B -Dstyle.color=never -Dtest=a.T,b.U -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false test',
      'a test without a module runs the whole reactor',
    );
    // Two tests of one module: that module (before, -pl needed as many modules as tests, so gson's ran the whole reactor).
    assert.equal(
      mavenCommand('mvn', ['gson:a.T', 'gson:b.U#m']),
      "mvn -o -B -Dstyle.color=never -pl gson -am '-Dtest=a.T,b.U#m' -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false test",
    );
    assert.equal(mavenCommand('mvn', []), 'mvn -o -B -Dstyle.color=never test');
    assert.equal(
      gradleCommand('./gradlew', ['jib-cli:test', 'core:a.T#x']),
      './gradlew --offline --no-daemon --continue --console=plain :jib-cli:test :core:test --tests a.T.x',
    );
  });
});

test(
  'the resolved rate: over every instance (an error is not resolved) ' +
    'and over the completed ones; --exclude-errors puts the second first',
  () => {
    const run = { resolved_instances: 1, total_instances: 4, completed_instances: 2, error_instances: 2 };
    assert.equal(resolvedRates(run), 'resolved: 25.0% of the 4 instances (2 errors: not resolved); 50.0% of the 2 completed');
    assert.equal(resolvedRates(run, true), 'resolved: 50.0% of the 2 completed; 25.0% of the 4 instances (2 errors: not resolved)');
    assert.equal(
      resolvedRates({ ...run, completed_instances: 0, resolved_instances: 0 }),
      'resolved: 0.0% of the 4 instances (2 errors: not resolved); n/a of the 0 completed',
    );
  },
);
