import { promises as fs } from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import type { Gym } from '../../../src/episode/gym.ts';
import { git } from '../../../src/repo/index.ts';
import { testContext } from '../../helpers.ts';

/**
 * A small SWE-bench-java instance of our own: a two-module Maven project (`core`, and `app`
 * which depends on it) with a git history, JUnit 5 from Maven Central (the versions the
 * example suite's Maven tasks use, so one Maven repository serves both). Its Surefire 2.x
 * generation (`surefire: '2'`) is the same project as gson's and old jackson's bases build it:
 * Surefire 2.12.4 (Maven 3's default binding) and JUnit 4.12, one test extending JUnit 3's
 * `TestCase`, tests listed by class (2.12.4 cannot mix `Class#method` with other patterns).
 *
 * History on `main`: `init` → `words` (the base: `Words.count` miscounts) → `fix` (the
 * fixing pull request: the fix plus its tests; tagged `v1.1`, the future an agent must not
 * see), and a branch `next` after it.
 */
export interface SwebenchFixture {
  /** Directory of mirrors (`acme+calc.git`, bare) for --repos-dir. */
  reposDir: string;
  /** The work tree the history was made in. */
  origin: string;
  /** SWE-bench-schema JSON Lines with the one instance. */
  dataset: string;
  repo: string;
  instanceId: string;
  base: string;
  fix: string;
  /** The gold patch (main code only) and the test patch, as in the dataset. */
  goldPatch: string;
  testPatch: string;
  failToPass: string[];
  passToPass: string[];
  /** The Surefire generation of its poms. */
  surefire: SurefireGeneration;
}

/** `3`: Surefire 3.2.5 and JUnit 5.10; `2`: Surefire 2.12.4 and JUnit 4.12. */
export type SurefireGeneration = '2' | '3';

const pomPlugins = (surefire: SurefireGeneration) => `
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.13.0</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>${surefire === '3' ? '3.2.5' : '2.12.4'}</version>
      </plugin>
    </plugins>
  </build>`;

const TEST_DEPENDENCY: Record<SurefireGeneration, string> = {
  '3': `<groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>5.10.2</version>`,
  '2': `<groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.12</version>`,
};

const rootPom = (surefire: SurefireGeneration) => `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId>
  <artifactId>calc-parent</artifactId>
  <version>1.0.0-SNAPSHOT</version>
  <packaging>pom</packaging>
  <modules>
    <module>core</module>
    <module>app</module>
  </modules>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      ${TEST_DEPENDENCY[surefire]}
      <scope>test</scope>
    </dependency>
  </dependencies>
${pomPlugins(surefire)}
</project>
`;

const modulePom = (name: string, deps = '') => `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>com.acme</groupId>
    <artifactId>calc-parent</artifactId>
    <version>1.0.0-SNAPSHOT</version>
  </parent>
  <artifactId>${name}</artifactId>
${deps}
</project>
`;

const APP_DEPS = `  <dependencies>
    <dependency>
      <groupId>com.acme</groupId>
      <artifactId>core</artifactId>
      <version>\${project.version}</version>
    </dependency>
  </dependencies>`;

const CALC = `package com.acme.core;

public final class Calc {
  private Calc() {}

  public static int add(int a, int b) {
    return a + b;
  }
}
`;

const CALC_TEST = `package com.acme.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CalcTest {
  @Test
  void addsTwoNumbers() {
    assertEquals(5, Calc.add(2, 3));
  }
}
`;

const WORDS_BUGGY = `package com.acme.core;

/** Word counting for reports. */
public final class Words {
  private Words() {}

  /** The number of words in {@code text}, words being separated by spaces. */
  public static int count(String text) {
    return text.split(" ").length;
  }
}
`;

const WORDS_FIXED = `package com.acme.core;

/** Word counting for reports. */
public final class Words {
  private Words() {}

  /** The number of words in {@code text}, words being separated by spaces. */
  public static int count(String text) {
    String trimmed = text.trim();
    return trimmed.isEmpty() ? 0 : trimmed.split("\\\\s+").length;
  }
}
`;

const WORDS_TEST_BASE = `package com.acme.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class WordsTest {
  @Test
  void countsASimpleSentence() {
    assertEquals(3, Words.count("one two three"));
  }
}
`;

const WORDS_TEST_FIX = `package com.acme.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class WordsTest {
  @Test
  void countsASimpleSentence() {
    assertEquals(3, Words.count("one two three"));
  }

  @Test
  void countsWordsSeparatedByRepeatedSpaces() {
    assertEquals(2, Words.count("one   two"));
  }
}
`;

const WORDS_EDGE_TEST = `package com.acme.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class WordsEdgeTest {
  @Test
  void emptyTextHasNoWords() {
    assertEquals(0, Words.count(""));
  }

  @Test
  void leadingAndTrailingSpacesAreNotWords() {
    assertEquals(1, Words.count("  word  "));
  }
}
`;

const REPORT = `package com.acme.app;

import com.acme.core.Calc;
import com.acme.core.Words;

public final class Report {
  private Report() {}

  public static String summary(String text) {
    return "words: " + Words.count(text) + ", twice: " + Calc.add(Words.count(text), Words.count(text));
  }
}
`;

const REPORT_TEST = `package com.acme.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ReportTest {
  @Test
  void summarisesASentence() {
    assertEquals("words: 2, twice: 4", Report.summary("hello world"));
  }
}
`;

/** The same tests for JUnit 4 (Surefire 2.x): `WordsEdgeTest` in JUnit 3's style, as old suites still have some. */
const JUNIT4_TESTS = {
  calc: `package com.acme.core;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class CalcTest {
  @Test
  public void addsTwoNumbers() {
    assertEquals(5, Calc.add(2, 3));
  }
}
`,
  wordsBase: `package com.acme.core;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class WordsTest {
  @Test
  public void countsASimpleSentence() {
    assertEquals(3, Words.count("one two three"));
  }
}
`,
  wordsFix: `package com.acme.core;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class WordsTest {
  @Test
  public void countsASimpleSentence() {
    assertEquals(3, Words.count("one two three"));
  }

  @Test
  public void countsWordsSeparatedByRepeatedSpaces() {
    assertEquals(2, Words.count("one   two"));
  }
}
`,
  edge: `package com.acme.core;

import junit.framework.TestCase;

public class WordsEdgeTest extends TestCase {
  public void testEmptyTextHasNoWords() {
    assertEquals(0, Words.count(""));
  }

  public void testLeadingAndTrailingSpacesAreNotWords() {
    assertEquals(1, Words.count("  word  "));
  }
}
`,
  report: `package com.acme.app;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class ReportTest {
  @Test
  public void summarisesASentence() {
    assertEquals("words: 2, twice: 4", Report.summary("hello world"));
  }
}
`,
};

const TESTS: Record<SurefireGeneration, typeof JUNIT4_TESTS> = {
  '3': { calc: CALC_TEST, wordsBase: WORDS_TEST_BASE, wordsFix: WORDS_TEST_FIX, edge: WORDS_EDGE_TEST, report: REPORT_TEST },
  '2': JUNIT4_TESTS,
};

export const ISSUE = `Words.count miscounts text with repeated or surrounding spaces

\`Words.count("one   two")\` returns 4 instead of 2, and \`Words.count("")\` returns 1 instead of 0.
Leading and trailing spaces are counted as words too: \`Words.count("  word  ")\` should be 1.`;

/** Builds the fixture under `root` (a fresh directory) with real git. */
export async function buildSwebenchFixture(
  root: string,
  opts: { reposDir?: string; surefire?: SurefireGeneration } = {},
): Promise<SwebenchFixture> {
  const surefire = opts.surefire ?? '3';
  const tests = TESTS[surefire];
  const name = surefire === '3' ? 'calc' : 'calc-legacy';
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
    'pom.xml': rootPom(surefire),
    'core/pom.xml': modulePom('core'),
    'app/pom.xml': modulePom('app', APP_DEPS),
    'core/src/main/java/com/acme/core/Calc.java': CALC,
    'core/src/test/java/com/acme/core/CalcTest.java': tests.calc,
    // Compiled files and archives are ignored, as in most Java repositories.
    '.gitignore': 'target/\n*.class\n*.jar\n',
  });
  // An executable and a symlink: a start state must give both back as git has them.
  await fs.mkdir(path.join(origin, 'bin'), { recursive: true });
  await fs.writeFile(path.join(origin, 'bin', 'check.sh'), '#!/bin/sh\necho checked\n', { mode: 0o755 });
  await fs.symlink('check.sh', path.join(origin, 'bin', 'check'));
  await commit('init: calc');
  await write({
    'core/src/main/java/com/acme/core/Words.java': WORDS_BUGGY,
    'core/src/test/java/com/acme/core/WordsTest.java': tests.wordsBase,
    'app/src/main/java/com/acme/app/Report.java': REPORT,
    'app/src/test/java/com/acme/app/ReportTest.java': tests.report,
  });
  const base = await commit('words: count words in reports');
  await write({
    'core/src/main/java/com/acme/core/Words.java': WORDS_FIXED,
    'core/src/test/java/com/acme/core/WordsTest.java': tests.wordsFix,
    'core/src/test/java/com/acme/core/WordsEdgeTest.java': tests.edge,
  });
  const fix = await commit('Fix #7: Words.count with repeated, leading and trailing spaces');
  await g(['tag', '-a', '-m', 'release 1.1', 'v1.1', fix]);
  await g(['checkout', '-q', '-b', 'next']);
  await write({ 'NEXT.md': 'later work\n' });
  await commit('next: later work');
  await g(['checkout', '-q', 'main']);

  const goldPatch = await g(['diff', base, fix, '--', 'core/src/main']);
  const testPatch = await g(['diff', base, fix, '--', 'core/src/test']);
  const reposDir = opts.reposDir ?? path.join(root, 'mirrors');
  await fs.mkdir(reposDir, { recursive: true });
  await git(['clone', '-q', '--mirror', origin, path.join(reposDir, `acme+${name}.git`)]);

  const instanceId = `acme__${name}-7`;
  // Surefire 2.12.4 runs a class or a method list, not both mixed: classes, as gson's records name them.
  const failToPass =
    surefire === '3'
      ? ['core:com.acme.core.WordsTest#countsWordsSeparatedByRepeatedSpaces', 'core:com.acme.core.WordsEdgeTest']
      : ['core:com.acme.core.WordsTest', 'core:com.acme.core.WordsEdgeTest'];
  const passToPass = [
    ...(surefire === '3' ? ['core:com.acme.core.WordsTest#countsASimpleSentence'] : []),
    'core:com.acme.core.CalcTest',
    'app:com.acme.app.ReportTest',
  ];
  const dataset = path.join(root, 'data', `acme_${name.replace(/-/g, '_')}.jsonl`);
  await fs.mkdir(path.dirname(dataset), { recursive: true });
  const row = {
    repo: `acme/${name}`,
    instance_id: instanceId,
    base_commit: base,
    patch: goldPatch,
    test_patch: testPatch,
    problem_statement: ISSUE,
    hints_text: 'Look at how the text is split.',
    created_at: '2024-01-01T00:00:00Z',
    version: '1.0',
    FAIL_TO_PASS: JSON.stringify(failToPass),
    PASS_TO_PASS: JSON.stringify(passToPass),
    environment_setup_commit: base,
  };
  await fs.writeFile(dataset, JSON.stringify(row) + '\n');
  return { reposDir, origin, dataset, repo: `acme/${name}`, instanceId, base, fix, goldPatch, testPatch, failToPass, passToPass, surefire };
}

/** Candidate patches that must not resolve the instance, by what they try: made with git against the base. */
export async function badPatches(fx: SwebenchFixture): Promise<Record<string, string>> {
  const wordsTest = 'core/src/test/java/com/acme/core/WordsTest.java';
  const edge = 'core/src/test/java/com/acme/core/WordsEdgeTest.java';
  const cases: Record<string, (dir: string) => Promise<void>> = {
    // Pre-empts the hidden failing test with one that cannot fail.
    'edits the failing test': (dir) =>
      fs.writeFile(
        path.join(dir, wordsTest),
        TESTS[fx.surefire].wordsBase.replace(
          /}\n$/,
          `\n  @Test\n  ${fx.surefire === '3' ? '' : 'public '}void countsWordsSeparatedByRepeatedSpaces() {}\n}\n`,
        ),
      ),
    'deletes the failing test': (dir) => fs.rm(path.join(dir, wordsTest)),
    'adds a file where the test patch adds one': (dir) =>
      fs.writeFile(
        path.join(dir, edge),
        'package com.acme.core;\n\nimport org.junit.jupiter.api.Test;\n\nclass WordsEdgeTest {\n  ' +
          '@Test void emptyTextHasNoWords() {}\n  @Test void leadingAndTrailingSpacesAreNotWords() {}\n}\n',
      ),
    'skips tests in the pom': async (dir) => {
      const pom = path.join(dir, 'core/pom.xml');
      const text = await fs.readFile(pom, 'utf8');
      await fs.writeFile(
        pom,
        text.replace(
          '<artifactId>core</artifactId>',
          '<artifactId>core</artifactId>\n  <properties>\n    <skipTests>true</skipTests>\n  </properties>',
        ),
      );
    },
  };
  const out: Record<string, string> = {};
  const scratch = `${fx.origin}-scratch`;
  await git(['clone', '-q', fx.origin, scratch]);
  try {
    await git(['checkout', '-q', fx.base], { cwd: scratch });
    for (const [name, make] of Object.entries(cases)) {
      await make(scratch);
      await git(['add', '-A'], { cwd: scratch });
      out[name] = await git(['diff', '--cached', '--binary', 'HEAD'], { cwd: scratch });
      await git(['reset', '-q', '--hard', fx.base], { cwd: scratch });
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
  return out;
}

/** The git commands an agent would use to find the fix, run in the episode's workspace. */
export async function historyInEpisode(gym: Gym, episodeId: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const command of [
    'git log --all --format=%H',
    'git tag',
    'git reflog',
    'git branch -a',
    'git remote -v',
    'git stash list',
    'git fsck --lost-found --no-reflogs 2>&1',
  ]) {
    const r = await gym.callTool('run_command', { command }, testContext(), episodeId);
    out[command] = String((r.data as { stdout: string }).stdout ?? '').trim();
  }
  return out;
}

export function assertNoFutureVisible(history: Record<string, string>, fx: SwebenchFixture, baseHistory: string[]): void {
  assert.deepEqual(history['git log --all --format=%H']!.split('\n'), baseHistory, JSON.stringify(history));
  assert.ok(!Object.values(history).some((v) => v.includes(fx.fix)), 'the fix commit appears nowhere');
  assert.equal(history['git tag'], '');
  assert.equal(history['git reflog'], '');
  assert.equal(history['git branch -a'], '* main');
  assert.equal(history['git remote -v'], '');
  assert.equal(history['git stash list'], '');
  assert.doesNotMatch(history['git fsck --lost-found --no-reflogs 2>&1']!, /dangling|unreachable/);
}
