import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it, test } from 'node:test';
import { readInstances } from '../../../envs/swebench/dataset.ts';
import { byClass, findChange, reconstruct, splitChange, testClassesOf, testClassesToRun } from '../../../envs/swebench/reconstruct.ts';
import { git } from '../../../src/repo/index.ts';
import type { TestStatus } from '../../../src/scoring/junit.ts';
import { tempDir, TEST_CACHE_DIR } from '../../helpers.ts';
import { buildSwebenchFixture, type SwebenchFixture } from './fixture.ts';

/**
 * The reconstruction on the Maven fixture: its fixing commit names `#7`, so the instance
 * `acme__calc-7` comes back with the fixture's own gold and test patches, base, and the
 * fail-to-pass / pass-to-pass tests Maven finds by running the touched classes before and after.
 */
describe('swe-bench-java: reconstructing an instance from the history', () => {
  let root: string;
  let fx: SwebenchFixture;
  let mirror: string;
  before(async () => {
    root = await tempDir('benchgym-swebench-recon-');
    fx = await buildSwebenchFixture(root);
    mirror = path.join(fx.reposDir, 'acme+calc.git');
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  it('finds the change naming #7 and splits it into the gold patch and the test patch', async () => {
    const change = await findChange(mirror, 7);
    assert.ok(change);
    assert.equal(change.method, 'commit-mention');
    assert.equal(change.commit, fx.fix);
    assert.equal(change.base, fx.base);
    const split = await splitChange(mirror, change);
    assert.deepEqual(testClassesOf(split.testFiles), ['core:com.acme.core.WordsEdgeTest', 'core:com.acme.core.WordsTest']);
    assert.match(split.patch, /core\/src\/main\/java\/com\/acme\/core\/Words\.java/);
    assert.doesNotMatch(split.patch, /src\/test/);
    assert.match(
      split.testPatch,
      /new file mode .*\n.*\n--- \/dev\/null\n\+\+\+ b\/core\/src\/test\/java\/com\/acme\/core\/WordsEdgeTest\.java/,
    );
    assert.equal(await findChange(mirror, 8), null);
  });

  it(
    'derives FAIL_TO_PASS and PASS_TO_PASS by running the tests, writes a row the reader takes, and resumes',
    { timeout: 10 * 60_000 },
    async () => {
      const out = path.join(root, 'out', 'calc.jsonl');
      const report = await reconstruct({
        repoDir: mirror,
        repo: 'acme/calc',
        ids: ['acme__calc-7', 'acme__calc-8'],
        out,
        cacheDir: TEST_CACHE_DIR,
      });
      assert.deepEqual(
        report.written.map((w) => [w.instance_id, w.method]),
        [['acme__calc-7', 'commit-mention']],
      );
      assert.deepEqual(
        report.failed.map((f) => f.instance_id),
        ['acme__calc-8'],
      );
      const [inst] = await readInstances(out);
      assert.ok(inst);
      assert.equal(inst.baseCommit, fx.base);
      // Test classes, as the benchmark lists Java tests: WordsEdgeTest is new, WordsTest has a case
      // failing before the fix (and one passing both times, which the class now covers).
      assert.deepEqual([...inst.failToPass].sort(), ['core:com.acme.core.WordsEdgeTest', 'core:com.acme.core.WordsTest']);
      assert.deepEqual(inst.passToPass, []);
      assert.match(inst.problemStatement, /Fix #7: Words\.count/);
      const row = JSON.parse((await fs.readFile(out, 'utf8')).trim()) as {
        patch: string;
        test_patch: string;
        reconstructed: { change_commit: string; problem_statement_source: string };
      };
      const noIndex = (p: string) => p.replace(/^index .*\n/gm, '');
      assert.equal(noIndex(row.patch), noIndex(fx.goldPatch));
      assert.equal(noIndex(row.test_patch), noIndex(fx.testPatch));
      assert.equal(row.reconstructed.change_commit, fx.fix);
      assert.match(row.reconstructed.problem_statement_source, /not in the history/);
      // Resumable: the id already written is not rebuilt.
      const again = await reconstruct({ repoDir: mirror, repo: 'acme/calc', ids: ['acme__calc-7'], out, cacheDir: TEST_CACHE_DIR });
      assert.deepEqual(again.written, []);
      assert.equal((await fs.readFile(out, 'utf8')).trim().split('\n').length, 1);
    },
  );
});

test('byClass: a class passes when one of its cases passed and none failed; nested classes count with their outer class', () => {
  const outcome = byClass(
    new Map<string, TestStatus>([
      ['core:a.WordsTest#one', 'passed'],
      ['core:a.WordsTest#two', 'failed'],
      ['a.Edge#x', 'passed'],
      ['a.Edge$Nested#y', 'passed'],
      ['a.Edge#z', 'skipped'],
      ['a.Errs#e', 'error'],
      ['a.Skipped#s', 'skipped'],
    ]),
  );
  assert.deepEqual(Object.fromEntries(outcome), {
    'core:a.WordsTest': 'failed',
    'a.Edge': 'passed',
    'a.Errs': 'failed',
    'a.Skipped': 'failed',
  });
});

test(
  'testClassesToRun: the touched test classes; for a change ' + 'touching only a helper, the test classes of its module that use it',
  async () => {
    const repo = await tempDir('benchgym-recon-helper-');
    try {
      const write = async (file: string, text: string) => {
        await fs.mkdir(path.dirname(path.join(repo, file)), { recursive: true });
        await fs.writeFile(path.join(repo, file), text);
      };
      const t = 'core/src/test/java/com/acme';
      await write(`${t}/InjectExtImpl.java`, 'package com.acme;\npublic class InjectExtImpl { }\n');
      await write(
        `${t}/ExtensionLoaderTest.java`,
        'package com.acme;\nclass ExtensionLoaderTest { @Test void inject() { new InjectExtImpl(); } }\n',
      );
      await write(`${t}/Wiring.java`, 'package com.acme;\nclass Wiring { @Test void wires() { InjectExtImpl x = null; } }\n');
      await write(`${t}/OtherTest.java`, 'package com.acme;\nclass OtherTest { @Test void other() { } }\n');
      await write(`${t}/Holder.java`, 'package com.acme;\nclass Holder { InjectExtImpl impl; }\n');
      await write(
        'web/src/test/java/com/acme/WebTest.java',
        'package com.acme;\nclass WebTest { @Test void web() { new InjectExtImpl(); } }\n',
      );
      await git(['init', '-q'], { cwd: repo });
      await git(['add', '-A'], { cwd: repo });
      await git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base'], { cwd: repo });
      const commit = (await git(['rev-parse', 'HEAD'], { cwd: repo })).trim();
      // A helper alone: the tests of its module that name it (a named test without a Test name too), not the
      // holder that declares no test, not a test that does not name it, not another module's.
      assert.deepEqual((await testClassesToRun(repo, commit, [`${t}/InjectExtImpl.java`, 'core/src/test/resources/x.json'])).sort(), [
        'core:com.acme.ExtensionLoaderTest',
        'core:com.acme.Wiring',
      ]);
      // With a test among the touched files: the touched files, as before.
      assert.deepEqual(await testClassesToRun(repo, commit, [`${t}/InjectExtImpl.java`, `${t}/OtherTest.java`]), [
        'core:com.acme.InjectExtImpl',
        'core:com.acme.OtherTest',
      ]);
      // A deleted source counts as a test of its own.
      assert.deepEqual(await testClassesToRun(repo, commit, [`${t}/GoneTest.java`]), ['core:com.acme.GoneTest']);
    } finally {
      await fs.rm(repo, { recursive: true, force: true });
    }
  },
);
