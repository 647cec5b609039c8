/**
 * CoderEval's Java procedure on benchgym's fixture: replace the method, recompile, run the test
 * class, the exit code decides. Runs where a JDK is installed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { JAVA_FIXTURE, javaScoreCommand } from '../../../envs/codereval/java.ts';
import { tempDir } from '../../helpers.ts';

const HAS_JDK = (() => {
  try {
    execFileSync('javac', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const FILE = 'src/org/benchgym/fixture/StringUtils.java';

async function score(candidate: string): Promise<{ code: number | null; output: string; source: string }> {
  const dir = await tempDir('codereval-java-');
  try {
    await fs.cp(JAVA_FIXTURE, dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'candidate.txt'), candidate);
    const r = spawnSync(
      'bash',
      [
        '-c',
        javaScoreCommand({
          file: FILE,
          method: 'trimArrayElements',
          candidate: 'candidate.txt',
          testClass: 'org.benchgym.fixture.NewTestFile',
        }),
      ],
      { cwd: dir, encoding: 'utf8', timeout: 120_000 },
    );
    return { code: r.status, output: `${r.stdout}${r.stderr}`, source: await fs.readFile(path.join(dir, FILE), 'utf8') };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

describe('CoderEval Java scoring on a fixture', { skip: HAS_JDK ? false : 'no JDK (javac) on this machine' }, () => {
  test('the original method passes; only the method is replaced, at its column', async () => {
    const original = await fs.readFile(path.join(JAVA_FIXTURE, FILE), 'utf8');
    const start = original.indexOf('public static String[] trimArrayElements');
    const method = original.slice(start, original.indexOf('\n  }\n', start) + 4);
    const r = await score(method);
    assert.equal(r.code, 0, r.output);
    assert.equal(r.source, original);
  });

  test("ChatGPT's published sample (no null handling) compiles and fails the test: exit code 1", async () => {
    const r = await score(
      'public static String[] trimArrayElements(String[] array){\n    String[] trimmedArray = new String[array.length];\n    ' +
        'for (int i = 0; i < array.length; i++) {\n        trimmedArray[i] = array[i].trim();\n    }\n    return trimmedArray;\n}',
    );
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /NullPointerException|Result not True/);
    assert.match(r.source, /\n {2}public static String\[\] trimArrayElements\(String\[\] array\)\{\n {6}String\[\] trimmedArray/);
    assert.match(r.source, /public static boolean hasText/, 'the rest of the class stays');
  });

  test('a candidate that does not compile fails, and a correct rewrite passes', async () => {
    const broken = await score('public static String[] trimArrayElements(String[] array) {\n  return array.map(String::trim);\n}');
    assert.notEqual(broken.code, 0);
    assert.match(broken.output, /error:/);
    const rewrite = await score(
      'public static String[] trimArrayElements(String[] array) {\n  if (array == null) return new String[0];\n  ' +
        'return java.util.Arrays.stream(array).map(s -> s == null ? null : s.trim()).toArray(String[]::new);\n}',
    );
    assert.equal(rewrite.code, 0, rewrite.output);
  });
});
