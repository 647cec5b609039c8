import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { compileErrorExcerpt, MavenEnvBuilder, mavenResolutionFailed, MAVEN_RESOLUTION_ERROR, warmSelection } from '../../src/env/maven.ts';
import { mavenCommand } from '../../src/scoring/runners.ts';
import { JavaEnvSpec } from '../../src/tasks/schema.ts';
import { haveMaven, makeWarmSeed, run, warmHelpers } from './maven_fixture.ts';

test('warmSelection: the selection of the tests, none for no tests; one test per module for one argument too long', () => {
  assert.deepEqual(warmSelection(['org.acme.ATest#adds']), [
    '-Dtest=org.acme.ATest#adds',
    '-Dsurefire.failIfNoSpecifiedTests=false',
    '-DfailIfNoTests=false',
  ]);
  assert.deepEqual(warmSelection(['core:a.T', 'core:b.U']), [
    '-pl',
    'core',
    '-am',
    '-Dtest=a.T,b.U',
    '-Dsurefire.failIfNoSpecifiedTests=false',
    '-DfailIfNoTests=false',
  ]);
  assert.deepEqual(warmSelection(undefined), []);
  assert.deepEqual(warmSelection([]), []);
  const many = Array.from({ length: 3000 }, (_, i) => `com.example.some.pkg.GeneratedTestClassNumber${i}Test`);
  assert.deepEqual(
    warmSelection(many),
    ['-Dtest=com.example.some.pkg.GeneratedTestClassNumber0Test', '-Dsurefire.failIfNoSpecifiedTests=false', '-DfailIfNoTests=false'],
    'a -Dtest of ~150 KB: one test of the (root) module',
  );
  const modules = ['core', 'extension', 'codegen'];
  const spread = Array.from({ length: 3000 }, (_, i) => `${modules[i % 3]}:com.example.some.pkg.GeneratedTestClassNumber${i}Test`);
  assert.deepEqual(
    warmSelection(spread),
    [
      '-pl',
      'core,extension,codegen',
      '-am',
      '-Dtest=com.example.some.pkg.GeneratedTestClassNumber0Test,' +
        'com.example.some.pkg.GeneratedTestClassNumber1Test,' +
        'com.example.some.pkg.GeneratedTestClassNumber2Test',
      '-Dsurefire.failIfNoSpecifiedTests=false',
      '-DfailIfNoTests=false',
    ],
    'the same modules built, one test of each run',
  );
  const longNames = Array.from({ length: 3000 }, (_, i) => `m${i}:${'x'.repeat(30)}.T${i}`);
  assert.deepEqual(warmSelection(longNames), [], 'one per module still too long: the whole suite');
});

describe(
  'MavenEnvBuilder: an env warmed by the tests named instead of the whole suite',
  { skip: haveMaven ? false : 'mvn and javac are not installed' },
  () => {
    let root: string;
    let seed: string;
    let builder: MavenEnvBuilder;
    before(async () => ({ root, seed, builder } = await makeWarmSeed()));
    after(() => fs.rm(root, { recursive: true, force: true }));
    const { marker } = warmHelpers(() => ({ root, seed }));

    test("the named test's run resolves what an offline run of another test needs (Surefire's provider included)", async () => {
      const env = await builder.prepare(JavaEnvSpec.parse({ kind: 'java', warmTests: ['org.acme.ATest'] }), { dir: seed });
      assert.equal((await marker(env.key)).ran, 'the warm-up tests');
      const work = path.join(root, 'work');
      await fs.cp(seed, work, { recursive: true });
      const r = await run('mvn', ['-o', '-B', `-Dmaven.repo.local=${builder.repository}`, '-Dtest=org.acme.BTest', 'test'], work);
      assert.equal(r.code, 0, r.out.slice(-3000));
      assert.match(r.out, /Tests run: 1, Failures: 0, Errors: 0/);
      // Another selection is another env; no selection is the whole suite's.
      const whole = await builder.prepare(JavaEnvSpec.parse({ kind: 'java' }), { dir: seed });
      assert.notEqual(whole.key, env.key);
      assert.equal((await marker(whole.key)).ran, 'the whole suite');
    });

    test(
      'warm-up tests that do not exist yet (all new in the hidden test ' +
        'patch): the whole suite, known from the sources or found after the run',
      async () => {
        // From the sources: the same env as the whole suite's (the same key, built once).
        const fromSources = await builder.prepare(JavaEnvSpec.parse({ kind: 'java', warmTests: ['org.acme.NewTest#adds'] }), { dir: seed });
        const whole = await builder.prepare(JavaEnvSpec.parse({ kind: 'java' }), { dir: seed });
        assert.equal(fromSources.key, whole.key);
        // Without a source tree (files only): the selected run runs nothing, so the whole suite runs after it.
        const files = Object.fromEntries(
          await Promise.all(
            ['pom.xml', 'src/test/java/org/acme/ATest.java'].map(
              async (rel) => [rel, await fs.readFile(path.join(seed, rel), 'utf8')] as const,
            ),
          ),
        );
        const env = await builder.prepare(JavaEnvSpec.parse({ kind: 'java', warmTests: ['org.acme.NewTest#adds'] }), { files });
        assert.equal((await marker(env.key)).ran, 'the whole suite (none of the warm-up tests exists yet)');
      },
    );

    test("a test left out (a runner's exclude) is not run: its class counts on its other methods, the build passes", async () => {
      const env = await builder.prepare(JavaEnvSpec.parse({ kind: 'java', warmTests: ['org.acme.ATest'] }), { dir: seed });
      const work = path.join(root, 'work-exclude');
      await fs.cp(seed, work, { recursive: true });
      await fs.writeFile(
        path.join(work, 'src', 'test', 'java', 'org', 'acme', 'NetTest.java'),
        'package org.acme;\n\nimport static org.junit.jupiter.api.Assertions.assertTrue;\n\nimport ' +
          'org.junit.jupiter.api.Test;\n\nclass NetTest {\n  @Test\n  void adds() {\n    assertTrue(1 + 1 == 2);\n  ' +
          '}\n\n  @Test\n  void needsAnInterface() {\n    assertTrue(false, "no network here");\n  }\n}\n',
      );
      const repo = `-Dmaven.repo.local=${builder.repository}`;
      const without = await run('sh', ['-c', mavenCommand('mvn', ['org.acme.NetTest'], [repo])], work);
      assert.notEqual(without.code, 0, 'the failing method fails the class when it runs');
      const excluded = await run(
        'sh',
        ['-c', mavenCommand('mvn', ['org.acme.NetTest', 'org.acme.ATest'], [repo], ['org.acme.NetTest#needsAnInterface'])],
        work,
      );
      assert.equal(excluded.code, 0, excluded.out.slice(-3000));
      assert.match(excluded.out, /Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, .* in org\.acme\.NetTest/);
      assert.match(excluded.out, /in org\.acme\.ATest/);
      assert.ok(env.key);
    });
  },
);

test("Maven's resolution failures are read from its own [ERROR] lines, not from a failing test's message", () => {
  const failures = [
    '[ERROR] Failed to execute goal on project jackson-databind: Could not resolve dependencies for project ' +
      ('com.fasterxml.jackson.core:jackson-databind:jar:3.0.0-SNAPSHOT: Could not ' +
        'find artifact com.fasterxml.jackson.core:jackson-core:jar:3.0.0-SNAPSHOT'),
    '[ERROR]     Non-resolvable parent POM for com.fasterxml.jackson.core:jackson-core:2.17.2-SNAPSHOT: ' +
      'Could not transfer artifact com.fasterxml.jackson:jackson-base:pom:2.17.2-SNAPSHOT',
    '[ERROR] Plugin org.apache.maven.plugins:maven-surefire-plugin:3.2.5 or one ' +
      'of its dependencies could not be resolved: Failed to read artifact descriptor',
    '[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) ' +
      'on project warm: Execution default-test of goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test ' +
      'failed: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the ' +
      'artifact org.junit.platform:junit-platform-launcher:jar:1.10.2 has not been downloaded from it before.',
  ];
  for (const line of failures) assert.ok(mavenResolutionFailed(`[INFO] Scanning for projects...\n${line}\n[ERROR] -> [Help 1]\n`), line);
  const tests = [
    // Surefire 2's summary and Surefire 3's, of jackson-databind 2.9's IllegalTypesCheckTest.
    '  IllegalTypesCheckTest.testJDKTypes1855:82->_testIllegalType:134 Expected Exception of type ' +
      "'InvalidDefinitionException', got 'InvalidTypeIdException', message: Could not resolve type id 'org.x' as a subtype",
    '[ERROR]   IllegalTypesCheckTest.testJDKTypes1855:82 Expected Exception, message: ' +
      "Could not resolve type id 'org.x' as a subtype of [simple type]: no such class found",
    '[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 s ' +
      '<<< FAILURE! -- in com.fasterxml.jackson.databind.interop.IllegalTypesCheckTest',
    'Could not resolve dependencies for project printed by a test',
  ];
  for (const line of tests) assert.equal(mavenResolutionFailed(`[INFO] Tests run\n${line}\n`), false, line);
});

test('the same expression with grep -E (the Docker env image checks its build log with it)', async () => {
  const grep = (text: string) =>
    new Promise<number>((resolve) => {
      const child = execFile('grep', ['-E', MAVEN_RESOLUTION_ERROR], (err) =>
        resolve(err ? Number((err as { code?: number }).code ?? 2) : 0),
      );
      child.stdin?.end(text);
    });
  assert.equal(
    await grep('[INFO] x\n[ERROR] Failed to execute goal on project p: Could not resolve dependencies for project a:b:jar:1\n'),
    0,
  );
  assert.equal(await grep("[INFO] x\n[ERROR]   FooTest.bar:12 message: Could not resolve type id 'x'\n"), 1);
});

test('compileErrorExcerpt: the COMPILATION ERROR block first, past earlier test failures and JVM warnings', () => {
  const log = [
    '[ERROR] Tests run: 964, Failures: 0, Errors: 1, Skipped: 4',
    '[ERROR] OpenJDK 64-Bit Server VM warning: Sharing is only supported ' +
      'for boot loader classes because bootstrap classpath has been appended',
    ...Array.from({ length: 12 }, (_, i) => `[ERROR] noise ${i}`),
    '[INFO] -------------',
    '[ERROR] COMPILATION ERROR : ',
    '[ERROR] /w/dubbo-native/src/main/java/A.java:[3,8] package sun.misc does not exist',
    '[ERROR] -> [Help 1]',
  ].join('\n');
  assert.equal(
    compileErrorExcerpt(log),
    '[ERROR] COMPILATION ERROR : \n[ERROR] /w/dubbo-native/src/main/java/A.java:[3,8] package sun.misc does not exist',
  );
  assert.equal(
    compileErrorExcerpt('[ERROR] Failed to execute goal x\n[ERROR] -> [Help 1]'),
    '[ERROR] Failed to execute goal x',
    'no COMPILATION ERROR block: the [ERROR] lines',
  );
});
