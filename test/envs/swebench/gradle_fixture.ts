import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { RepoSpec } from '../../../envs/swebench/index.ts';
import { git } from '../../../src/repo/index.ts';

/**
 * A small Gradle SWE-bench instance: a single-project Java build that Gradle 4.4 (Debian's
 * `gradle` package, on JDK 17) to 8 can build (`apply plugin: 'java'`, JUnit 4.13.2 from
 * Maven Central), with the Gradle wrapper's files of a Gradle 8 project whose
 * `distributionUrl` names `distributionUrl` (a host that does not answer, in the tests).
 * History: base (`Words.count` miscounts) → fix (fix + tests), mirrored bare.
 */
export interface GradleFixture {
  reposDir: string;
  dataset: string;
  repo: string;
  instanceId: string;
  base: string;
  goldPatch: string;
  testPatch: string;
  failToPass: string[];
  passToPass: string[];
  specs: Record<string, Record<string, RepoSpec>>;
}

const BUILD = `apply plugin: 'java'

repositories {
  mavenCentral()
}

dependencies {
  testCompile 'junit:junit:4.13.2'
}
`;

const WORDS = (body: string) => `package com.acme;

public final class Words {
  private Words() {}

  public static int count(String text) {
${body}
  }
}
`;

const CALC =
  'package com.acme;\n\npublic final class Calc {\n  private Calc() {}\n\n  ' +
  'public static int add(int a, int b) {\n    return a + b;\n  }\n}\n';
const CALC_TEST =
  'package com.acme;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic ' +
  'class CalcTest {\n  @Test\n  public void addsTwoNumbers() {\n    assertEquals(5, Calc.add(2, 3));\n  }\n}\n';
const WORDS_TEST = (extra: string) =>
  `package com.acme;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class WordsTest ` +
  `{\n  @Test\n  public void countsASimpleSentence() {\n    assertEquals(3, Words.count("one two three"));\n  }\n${extra}}\n`;
const REPEATED = '\n  @Test\n  public void countsRepeatedSpaces() {\n    assertEquals(2, Words.count("one   two"));\n  }\n';
const EDGE_TEST =
  'package com.acme;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class ' +
  'WordsEdgeTest {\n  @Test\n  public void emptyTextHasNoWords() {\n    assertEquals(0, Words.count(""));\n  }\n}\n';

/** Builds the fixture under `root`; `distributionUrl` goes into gradle-wrapper.properties. */
export async function buildGradleFixture(root: string, distributionUrl: string): Promise<GradleFixture> {
  const origin = path.join(root, 'origin');
  await fs.mkdir(origin, { recursive: true });
  const g = (args: string[]) =>
    git(args, { cwd: origin, env: { GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z' } });
  const write = async (files: Record<string, string>) => {
    for (const [rel, text] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(origin, rel)), { recursive: true });
      await fs.writeFile(path.join(origin, rel), text);
    }
  };
  const commit = async (msg: string) => {
    await g(['add', '-A']);
    await g(['commit', '-q', '-m', msg]);
    return (await g(['rev-parse', 'HEAD'])).trim();
  };
  await g(['init', '-q', '-b', 'main']);
  await write({
    'build.gradle': BUILD,
    'settings.gradle': "rootProject.name = 'gcalc'\n",
    // The wrapper's files; its launcher is never run here (its distribution cannot be had).
    gradlew: '#!/bin/sh\necho "gradlew: the wrapper of this fixture is not runnable" >&2\nexit 1\n',
    'gradle/wrapper/gradle-wrapper.properties':
      `distributionBase=GRADLE_USER_HOME\ndistributionPath=wrapper/dists\n` +
      `distributionUrl=${distributionUrl.replace(/:/g, '\\:')}\nzipStoreBase=GRADLE_USER_HOME\nzipStorePath=wrapper/dists\n`,
    '.gitignore': 'build/\n.gradle/\n',
    'src/main/java/com/acme/Calc.java': CALC,
    'src/main/java/com/acme/Words.java': WORDS('    return text.split(" ").length;'),
    'src/test/java/com/acme/CalcTest.java': CALC_TEST,
    'src/test/java/com/acme/WordsTest.java': WORDS_TEST(''),
  });
  await fs.chmod(path.join(origin, 'gradlew'), 0o755);
  const base = await commit('words: count words');
  await write({
    'src/main/java/com/acme/Words.java': WORDS('    String t = text.trim();\n    return t.isEmpty() ? 0 : t.split("\\\\s+").length;'),
    'src/test/java/com/acme/WordsTest.java': WORDS_TEST(REPEATED),
    'src/test/java/com/acme/WordsEdgeTest.java': EDGE_TEST,
  });
  const fix = await commit('Fix #3: Words.count with repeated spaces and empty text');
  const goldPatch = await g(['diff', base, fix, '--', 'src/main']);
  const testPatch = await g(['diff', base, fix, '--', 'src/test']);
  const reposDir = path.join(root, 'mirrors');
  await fs.mkdir(reposDir, { recursive: true });
  await git(['clone', '-q', '--mirror', origin, path.join(reposDir, 'acme+gcalc.git')]);
  const instanceId = 'acme__gcalc-3';
  const failToPass = ['com.acme.WordsTest#countsRepeatedSpaces', 'com.acme.WordsEdgeTest'];
  const passToPass = ['com.acme.WordsTest#countsASimpleSentence', 'com.acme.CalcTest'];
  const dataset = path.join(root, 'data', 'gcalc.jsonl');
  await fs.mkdir(path.dirname(dataset), { recursive: true });
  const row = {
    repo: 'acme/gcalc',
    instance_id: instanceId,
    base_commit: base,
    patch: goldPatch,
    test_patch: testPatch,
    problem_statement: 'Words.count miscounts repeated spaces and empty text',
    version: '1',
    FAIL_TO_PASS: failToPass,
    PASS_TO_PASS: passToPass,
  };
  await fs.writeFile(dataset, JSON.stringify(row) + '\n');
  const specs: Record<string, Record<string, RepoSpec>> = {
    'acme/gcalc': {
      '*': { language: 'java', jdk: '17', build: 'gradle', args: [], edits: [], testFiles: ['**/src/test/**'], timeoutMs: 10 * 60_000 },
    },
  };
  return { reposDir, dataset, repo: 'acme/gcalc', instanceId, base, goldPatch, testPatch, failToPass, passToPass, specs };
}
