import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { builtinSuites } from '../../../bin/builtins.ts';
import { git } from '../../../src/repo/index.ts';
import { validateTask } from '../../../src/scoring/validate.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, tempDir } from '../../helpers.ts';
import { buildSwebenchFixture, type SwebenchFixture } from './fixture.ts';

/**
 * The rules on what of the candidate's is a test file and what becomes of it (issue 38), on the
 * fixture instance with real Maven: a test file of the candidate's that the test patch does not
 * overwrite stays in faithful scoring, as the harness leaves it (one that does not compile fails
 * the build: unresolved), and is set aside in strict scoring, said in the notes; main sources
 * under a folder named `test` are no test files; a FAIL_TO_PASS test that passes on the start
 * state makes the task invalid.
 */
describe('swe-bench-java: the candidate test files and the start state', () => {
  let root: string;
  let fx: SwebenchFixture;
  before(async () => {
    root = await tempDir('benchgym-swebench-testfiles-');
    fx = await buildSwebenchFixture(root);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  const registryFor = () => {
    const registry = new SuiteRegistry(builtinSuites({ reposDir: fx.reposDir }));
    registry.enable(`swe-bench-java=${fx.dataset}`);
    return registry;
  };

  /** The gold patch plus `files` written over the base, as one git diff. */
  const goldWith = async (files: Record<string, (old: string | null) => string>): Promise<string> => {
    const scratch = `${fx.origin}-${Math.random().toString(36).slice(2, 8)}`;
    await git(['clone', '-q', fx.origin, scratch]);
    try {
      await git(['checkout', '-q', fx.base], { cwd: scratch });
      await git(['apply'], { cwd: scratch, input: fx.goldPatch });
      for (const [rel, make] of Object.entries(files)) {
        const file = path.join(scratch, rel);
        await fs.mkdir(path.dirname(file), { recursive: true });
        await fs.writeFile(file, make(await fs.readFile(file, 'utf8').catch(() => null)));
      }
      await git(['add', '-A'], { cwd: scratch });
      return await git(['diff', '--cached', 'HEAD'], { cwd: scratch });
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  };
  const show = (v: Verdict) => JSON.stringify({ status: v.status, notes: v.notes, error: v.error, f2p: v.failToPass }, null, 1);

  it(
    'a test file of the candidate that does not compile: unresolved in ' +
      'faithful scoring (TEST_COMPILE_FAILED), set aside and noted in strict',
    { timeout: 20 * 60_000 },
    async () => {
      const broken = 'core/src/test/java/com/acme/core/WordsMoreTest.java';
      // A JUnit 5 test using a class it never imports, as the published patches did.
      const patch = await goldWith({
        [broken]: () =>
          'package com.acme.core;\n\nimport org.junit.jupiter.api.Test;\n\nclass WordsMoreTest ' +
          '{\n  @Test\n  void counts() {\n    var words = new WordSplitter();\n  }\n}\n',
      });
      const { gym, cleanup } = await makeGym({ registry: registryFor() });
      try {
        const task = await gym.registry.task('swe-bench-java', fx.instanceId);
        const faithful = await gym.score(task, patch, { scoring: 'faithful' });
        assert.equal(faithful.reward, 0, show(faithful));
        assert.equal(faithful.status, 'failed', show(faithful));
        assert.ok(
          faithful.notes.some((n) => n.startsWith('CANDIDATE_TEST_FILES_KEPT: 1 test file(s)') && n.includes(broken)),
          show(faithful),
        );
        assert.ok(
          faithful.notes.some((n) => new RegExp(`^TEST_COMPILE_FAILED: .*${broken.replace(/[.]/g, '\\.')}:8: `).test(n)),
          show(faithful),
        );
        const strict = await gym.score(task, patch, { scoring: 'strict' });
        assert.equal(strict.reward, 1, show(strict));
        assert.ok(
          strict.notes.some((n) => n.startsWith('CANDIDATE_TEST_FILES_SET_ASIDE: 1 test file(s)') && n.includes(broken)),
          show(strict),
        );
      } finally {
        await cleanup();
      }
    },
  );

  it(
    'main sources under a folder named test (src/main/java/com/src/test/java/...) are the code under test, not test files',
    { timeout: 20 * 60_000 },
    async () => {
      const helper = 'core/src/main/java/com/src/test/java/Marker.java';
      const words = 'core/src/main/java/com/acme/core/Words.java';
      const patch = await goldWith({
        [helper]: () =>
          'package com.src.test.java;\n\npublic final class Marker {\n  private Marker() {}\n\n  public static final int VALUE = 1;\n}\n',
        // The fix now needs the helper: were it taken for a test file and removed, core would not compile.
        [words]: (old) =>
          old!.replace(
            'public final class Words {',
            'public final class Words {\n  private static final int MARKER = com.src.test.java.Marker.VALUE;\n',
          ),
      });
      const { gym, cleanup } = await makeGym({ registry: registryFor() });
      try {
        const task = await gym.registry.task('swe-bench-java', fx.instanceId);
        const v = await gym.score(task, patch, { scoring: 'strict' });
        assert.equal(v.reward, 1, show(v));
        assert.ok(!v.notes.some((n) => n.includes(helper)), show(v));
      } finally {
        await cleanup();
      }
    },
  );

  it('a FAIL_TO_PASS test that passes on the start state makes validate say invalid, naming it', { timeout: 20 * 60_000 }, async () => {
    const { gym, cleanup } = await makeGym({ registry: registryFor() });
    try {
      const task = await gym.registry.task('swe-bench-java', fx.instanceId);
      // CalcTest passes before any fix: listed among the failing ones, as the shared gson records list extras/proto classes.
      const calc = 'core:com.acme.core.CalcTest';
      const runner = task.tests.hidden.runner;
      assert.equal(runner.type, 'maven');
      const cannotFail = {
        ...task,
        tests: { ...task.tests, failToPass: [...task.tests.failToPass, calc], passToPass: task.tests.passToPass.filter((t) => t !== calc) },
      };
      const r = await validateTask(gym, cannotFail);
      assert.equal(r.status, 'invalid', JSON.stringify(r));
      assert.match(
        r.reasons.join('\n'),
        /^1 FAIL_TO_PASS test\(s\) already pass on the untouched start state .*: core:com\.acme\.core\.CalcTest$/m,
        JSON.stringify(r),
      );
      assert.equal(r.startState?.reward, 0, 'the reward alone says nothing: the other FAIL_TO_PASS tests fail');
    } finally {
      await cleanup();
    }
  });
});
