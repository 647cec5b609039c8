import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { LocalSandboxFactory } from '../../src/sandbox/local/index.ts';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { JavaBuildGuard, MAVEN_FORKED_TESTS } from '../../src/scoring/java_guard.ts';
import { runTests } from '../../src/scoring/runners.ts';
import type { ScoringMode } from '../../src/scoring/mode.ts';
import { tempDir } from '../helpers.ts';

/**
 * The build guard on a real local sandbox (no Maven): a start state is recorded, the "patch"
 * is commands that write what patches can write (files, links, deletions, folders), and the
 * guard must leave the start state's build configuration, remove refused files and output,
 * keep the code under test, and say each in a note.
 */

const POM = '<project><modelVersion>4.0.0</modelVersion><artifactId>root</artifactId></project>\n';
const CORE_POM = '<project><artifactId>core</artifactId></project>\n';
const START: Record<string, string> = {
  'pom.xml': POM,
  'core/pom.xml': CORE_POM,
  '.mvn/jvm.config': '-Xmx1g\n',
  mvnw: '#!/bin/sh\nexec mvn "$@"\n',
  'gradle/wrapper/gradle-wrapper.properties': 'distributionUrl=x\n',
  'core/src/main/java/com/acme/Words.java': 'package com.acme;\npublic class Words {}\n',
  'core/src/main/java/org/mockito/Own.java': 'package org.mockito.own;\npublic class Own {}\n',
  'core/src/test/java/org/junit/Helper.java': 'package org.junit;\nclass Helper {}\n',
  'core/src/test/resources/projects/a/pom.xml': '<project>test data</project>\n',
  'lib/tool.jar': 'PK start-state jar bytes',
};

describe('the Java build guard on a local sandbox', () => {
  let baseDir: string;
  let factory: LocalSandboxFactory;
  before(async () => {
    baseDir = await tempDir('benchgym-guard-');
    factory = new LocalSandboxFactory({ baseDir, isolation: 'none' });
  });
  after(async () => {
    await factory.close();
    await fs.rm(baseDir, { recursive: true, force: true });
  });

  /** A sandbox at the start state (mvnw executable), the guard's record of it, `change` run as the patch, then enforce. */
  async function guarded(change: string, opts: { mode?: ScoringMode; files?: Record<string, string>; declared?: string } = {}) {
    const sandbox = await factory.create({ seed: { files: { ...START, ...opts.files } } });
    const setup = await sandbox.exec('chmod 755 mvnw');
    assert.equal(setup.exitCode, 0, setup.stderr);
    const guard = new JavaBuildGuard({ tool: 'maven', mode: opts.mode ?? 'strict', testFiles: ['**/src/test/**'] });
    const log: string[] = [];
    const notes: string[] = [];
    await guard.readStartState(sandbox, log);
    const patch = await sandbox.exec(`set -e\n${change}`);
    assert.equal(patch.exitCode, 0, patch.stderr);
    await guard.enforce(sandbox, notes, log, opts.declared);
    return { sandbox, guard, notes, log };
  }

  const sh = async (sandbox: Sandbox, command: string) => {
    const r = await sandbox.exec(command);
    assert.equal(r.exitCode, 0, r.stderr);
    return r.stdout;
  };

  test(
    'build configuration goes back to the start state whatever the ' + 'patch did: changed, a link, deleted, added, replaced by a folder',
    async () => {
      const { sandbox, notes } = await guarded(
        [
          "printf '<project><forkCount >0</forkCount ></project>' > pom.xml",
          "mkdir -p tools/mvn && printf -- '-javaagent:tools/a.jar\\n' > tools/mvn/jvm.config && rm -rf .mvn && ln -s tools/mvn .mvn",
          "cp core/pom.xml core/pom-next.xml && printf '<forkMode>never</forkMode>' " +
            '>> core/pom-next.xml && rm core/pom.xml && ln -s pom-next.xml core/pom.xml',
          'rm mvnw',
          "mkdir -p build-parent && printf '<project/>' > build-parent/pom.xml",
          'rm gradle/wrapper/gradle-wrapper.properties && mkdir gradle/wrapper/gradle-wrapper.properties',
          "printf '<project>changed test data</project>' > core/src/test/resources/projects/a/pom.xml",
          "printf 'public class A {}' > core/src/main/java/com/acme/A.java",
        ].join('\n'),
      );
      for (const [rel, content] of Object.entries(START)) {
        if (rel.startsWith('core/src/test/')) continue;
        assert.equal((await sandbox.readFile(rel)).toString(), content, rel);
      }
      assert.equal(
        await sh(
          sandbox,
          'stat -c %a mvnw; test -d .mvn && ! test -L .mvn && ! test -L core/pom.xml && ! test -e build-parent/pom.xml && echo ok',
        ),
        '755\nok\n',
      );
      // Test files are the suite's to reset, the code under test stays: neither is the guard's.
      assert.equal(
        (await sandbox.readFile('core/src/test/resources/projects/a/pom.xml')).toString(),
        '<project>changed test data</project>',
      );
      assert.equal((await sandbox.readFile('core/src/main/java/com/acme/A.java')).toString(), 'public class A {}');
      const restored = notes.find((n) => n.startsWith('BUILD_CONFIG_RESTORED: '));
      assert.ok(restored, notes.join('\n'));
      for (const part of [
        'pom.xml (changed)',
        '.mvn (a symbolic link where the start state has a folder)',
        'core/pom.xml (a symbolic link where the start state has a file)',
        'mvnw (deleted)',
        'build-parent/pom.xml (added where the start state has none)',
        'gradle (changed)',
      ]) {
        assert.ok(restored.includes(part), `${part}: ${restored}`);
      }
      // Nothing the patch added was refused: configuration is restored, not judged.
      assert.ok(!notes.some((n) => n.startsWith('CANDIDATE_FILE_REFUSED')), notes.join('\n'));
      await sandbox.destroy();
    },
  );

  test(
    'a build file written again with the same bytes is no change; a file ' +
      'added to .mvn is; a declared build change is laid down after the restore',
    async () => {
      const declared =
        'diff --git a/pom.xml b/pom.xml\n--- a/pom.xml\n+++ b/pom.xml\n@@ -1 +1 ' +
        '@@\n-<project><modelVersion>4.0.0</modelVersion><artifactId>root</artifactId></project>\n' +
        '+<project><modelVersion>4.0.0</modelVersion><artifactId>root</artifactId><version>2</version></project>\n';
      const { sandbox, notes } = await guarded(
        `cp pom.xml /tmp/p.$$ && rm pom.xml && cp /tmp/p.$$ pom.xml && rm /tmp/p.$$ && printf ` +
          `'<project>x</project>' > core/pom.xml && printf '<extensions/>' > .mvn/extensions.xml`,
        { declared },
      );
      assert.match(
        notes.find((n) => n.startsWith('BUILD_CONFIG_RESTORED'))!,
        /: (core\/pom\.xml \(changed\), \.mvn \(changed\)|\.mvn \(changed\), core\/pom\.xml \(changed\))$/,
      );
      assert.equal(await sandbox.stat('.mvn/extensions.xml'), null, 'a file added to a configuring folder goes with the restore');
      assert.equal(
        (await sandbox.readFile('pom.xml')).toString(),
        '<project><modelVersion>4.0.0</modelVersion><artifactId>root</artifactId><version>2</version></project>\n',
      );
      assert.equal((await sandbox.readFile('core/pom.xml')).toString(), CORE_POM);
      await sandbox.destroy();
    },
  );

  test(
    'files that would reach the compiler or the toolchain are refused ' + 'and removed; the code under test and its own services stay',
    async () => {
      const change = [
        'mkdir -p core/src/main/resources/META-INF/services ' +
          'core/src/main/resources/org/junit core/src/main/java/com/acme/u core/target/classes',
        "printf 'x' > core/src/main/resources/org/junit/Assert.class",
        "printf 'tools.P\\n' > core/src/main/resources/META-INF/services/javax.annotation.processing.Processor",
        "printf 'com.acme.Impl\\n' > core/src/main/resources/META-INF/services/com.acme.Spi",
        "printf 'junit.jupiter.extensions.autodetection.enabled=true\\n' > core/src/main/resources/junit-platform.properties",
        "printf 'Manifest-Version: 1.0\\nPremain-Class: a.B\\n' > core/src/main/resources/META-INF/MANIFEST.MF",
        "printf '/* x */ \\\\u0070ackage org /* y */ . junit;\\npublic class Assert {}\\n' > core/src/main/java/com/acme/u/Assert.java",
        "printf 'package org.mockito.own;\\nclass More {}\\n' > core/src/main/java/org/mockito/More.java",
        "printf 'module m { provides javax.annotation.processing.Processor with a.P; }' > core/src/main/java/module-info.java",
        "printf 'package com.acme;\\nclass Gen extends " +
          "javax.annotation.processing.AbstractProcessor {}\\n' > core/src/main/java/com/acme/Gen.java",
        'ln -s /usr/share core/src/main/resources/shared',
        "printf 'PK changed' > lib/tool.jar",
        "printf 'x' > core/target/classes/Stale.txt",
        "printf 'package org.junit;\\nclass InTests {}\\n' > core/src/test/java/org/junit/InTests.java",
        "printf 'package com.acme;\\npublic class Words { int fixed; }\\n' > core/src/main/java/com/acme/Words.java",
      ].join('\n');
      const { sandbox, guard, notes } = await guarded(change);
      const refused = new Map(guard.refusals.map((r) => [r.path, r.why]));
      assert.deepEqual([...refused.keys()].sort(), [
        'core/src/main/java/com/acme/Gen.java',
        'core/src/main/java/com/acme/u/Assert.java',
        'core/src/main/java/module-info.java',
        'core/src/main/resources/META-INF/MANIFEST.MF',
        'core/src/main/resources/META-INF/services/javax.annotation.processing.Processor',
        'core/src/main/resources/junit-platform.properties',
        'core/src/main/resources/org/junit/Assert.class',
        'core/src/main/resources/shared',
        // The candidate's test files run in the test JVM too (faithful scoring keeps them): judged like any file.
        'core/src/test/java/org/junit/InTests.java',
        'lib/tool.jar',
      ]);
      assert.match(refused.get('core/src/main/java/com/acme/u/Assert.java')!, /declares package org\.junit/);
      assert.match(refused.get('core/src/main/resources/shared')!, /symbolic link out of the workspace/);
      for (const rel of refused.keys()) if (rel !== 'lib/tool.jar') assert.equal(await sandbox.stat(rel), null, `${rel} is still there`);
      assert.equal(
        (await sandbox.readFile('lib/tool.jar')).toString(),
        'PK start-state jar bytes',
        'a changed start-state file is put back',
      );
      assert.equal(await sandbox.stat('core/target'), null, 'output the patch carried is removed');
      for (const kept of ['core/src/main/resources/META-INF/services/com.acme.Spi', 'core/src/main/java/org/mockito/More.java'])
        assert.ok(await sandbox.stat(kept), kept);
      assert.match((await sandbox.readFile('core/src/main/java/com/acme/Words.java')).toString(), /fixed/);
      assert.match(
        guard.tamperNote()!,
        new RegExp(
          String.raw`^TAMPER_SUSPECTED: the patch carries 10 file\(s\) that would reach the compiler or the test toolchain ` +
            String.raw`.*core\/src\/main\/java\/com\/acme\/Gen\.java`,
        ),
      );
      assert.ok(
        notes.some(
          (n) =>
            n ===
            'CANDIDATE_FILE_REFUSED: lib/tool.jar compiled code or an archive: what runs would ' +
              'not be what the diff shows; put back as the start state has it before scoring',
        ),
        notes.join('\n'),
      );
      assert.ok(
        notes.some((n) => /^BUILD_CONFIG_RESTORED: build output the patch carried was removed .*: core\/target$/.test(n)),
        notes.join('\n'),
      );
      await sandbox.destroy();
    },
  );

  test('faithful mode drops the same files without refusing the patch', async () => {
    const { sandbox, guard, notes } = await guarded(
      "mkdir -p core/src/main/java/org/junit && printf 'package org.junit;\\npublic " +
        "class Assert {}\\n' > core/src/main/java/org/junit/Assert.java",
      { mode: 'faithful' },
    );
    assert.equal(guard.tamperNote(), null);
    assert.equal(await sandbox.stat('core/src/main/java/org/junit/Assert.java'), null);
    assert.ok(
      notes.some((n) =>
        new RegExp(
          String.raw`^CANDIDATE_FILE_REFUSED: core\/src\/main\/java\/org\/junit\/Assert\.java declares package ` +
            String.raw`org\.junit.*; removed before scoring$`,
        ).test(n),
      ),
      notes.join('\n'),
    );
    await sandbox.destroy();
  });

  test(
    "the scoring build's settings: forked tests, no attach; javac forked where the " +
      'start state builds processors; a start-state pom that does not fork is noted',
    async () => {
      const plain = await guarded('true');
      const maven = { type: 'maven' as const, tests: ['A'], args: ['-Dx=1'] };
      assert.deepEqual(plain.guard.runner(maven).args, ['-Dx=1', ...MAVEN_FORKED_TESTS]);
      assert.deepEqual(plain.guard.runEnv(maven), { MAVEN_OPTS: '-XX:+DisableAttachMechanism' });
      assert.ok(!plain.notes.some((n) => n.startsWith('TESTS_IN_MAVEN_JVM')));
      await plain.sandbox.destroy();
      const hosting = await guarded(
        "printf 'package com.acme;\\nclass P2 extends " +
          "javax.annotation.processing.AbstractProcessor {}\\n' > core/src/main/java/com/acme/P2.java",
        {
          files: {
            'pom.xml': '<project><modules><module>core</module><module>gen/pom.xml</module></modules></project>\n',
            'gen/src/main/resources/META-INF/services/javax.annotation.processing.Processor': 'com.acme.P\n',
            'core/pom.xml':
              '<project><build><plugins><plugin><configuration>' +
              '<forkCount>0</forkCount></configuration></plugin></plugins></build></project>\n',
          },
        },
      );
      assert.deepEqual(hosting.guard.runner(maven).args, ['-Dx=1', ...MAVEN_FORKED_TESTS, '-Dmaven.compiler.fork=true']);
      assert.deepEqual(hosting.guard.refusals, [], 'processor code is the code under test where the start state builds processors');
      assert.ok(
        hosting.notes.some((n) => n.startsWith('TESTS_IN_MAVEN_JVM: ') && n.includes('<forkCount>0</forkCount> in core/pom.xml')),
        hosting.notes.join('\n'),
      );
      await hosting.sandbox.destroy();
      // A processor module no pom names (gson's codegen before 2.9) is never built: no forked javac, and processor code is judged as
      // without one.
      const unbuilt = await guarded(
        "printf 'package com.acme;\\nclass P2 extends " +
          "javax.annotation.processing.AbstractProcessor {}\\n' > core/src/main/java/com/acme/P2.java",
        {
          files: {
            'codegen/pom.xml': '<project/>\n',
            'codegen/src/main/resources/META-INF/services/javax.annotation.processing.Processor': 'com.acme.P\n',
          },
        },
      );
      assert.deepEqual(unbuilt.guard.runner(maven).args, ['-Dx=1', ...MAVEN_FORKED_TESTS]);
      assert.deepEqual(
        unbuilt.guard.refusals.map((r) => r.path),
        ['core/src/main/java/com/acme/P2.java'],
      );
      await unbuilt.sandbox.destroy();
    },
  );

  test("the run's appended MAVEN_OPTS reach the build tool beside the sandbox's own", async () => {
    const sandbox = await factory.create({
      seed: { files: { 'fake-mvn': '#!/bin/sh\nprintf "opts=%s args=%s\\n" "$MAVEN_OPTS" "$*"\n' } },
      env: { vars: { MAVEN_OPTS: '-Dmaven.repo.local=/m2' } },
    });
    try {
      await sh(sandbox, 'chmod +x fake-mvn');
      const env = { key: 'k', kind: 'java' as const, path: [], vars: {}, readOnlyPaths: [], command: './fake-mvn', notes: [] };
      const guard = new JavaBuildGuard({ tool: 'maven', mode: 'strict', testFiles: [] });
      const spec = { type: 'maven' as const, tests: ['core:a.BTest'], args: [] };
      const run = await runTests(sandbox, env, guard.runner(spec), { timeoutMs: 60_000, appendEnv: guard.runEnv(spec) });
      assert.match(
        run.exec.stdout,
        new RegExp(
          String.raw`^opts=-Dmaven\.repo\.local=\/m2 -XX:\+DisableAttachMechanism args=-o -B .*-DforkCount=1 ` +
            String.raw`-DforkMode=once .*-pl core -am -Dtest=a\.BTest `,
          'm',
        ),
        run.exec.stdout + run.exec.stderr,
      );
    } finally {
      await sandbox.destroy();
    }
  });
});
