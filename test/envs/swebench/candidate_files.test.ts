import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { git } from '../../../src/repo/index.ts';
import { bubblewrapAvailable } from '../../../src/sandbox/local/index.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, tempDir } from '../../helpers.ts';
import { buildSwebenchFixture, type SwebenchFixture } from './fixture.ts';
import { builtinSuites } from '../../../bin/builtins.ts';

/**
 * The SWE-bench scorer on the fixture instance: a candidate that replaces `core/src` with a
 * symbolic link out of the workspace (so every test file, and the test patch, lie beyond
 * it) gets a wrong answer with a note, not an infrastructure error, and the harness's
 * resets never follow the link to delete or write files outside.
 */
describe('swe-bench-java: candidate files are a wrong answer', () => {
  let root: string;
  let fx: SwebenchFixture;
  let outside: string;
  let patch: string;
  const sentinel = () => path.join(outside, 'test/java/com/acme/core/CalcTest.java');
  before(async () => {
    root = await tempDir('benchgym-swebench-cand-');
    fx = await buildSwebenchFixture(root);
    outside = path.join(root, 'outside');
    const scratch = `${fx.origin}-scratch`;
    await git(['clone', '-q', fx.origin, scratch]);
    await git(['checkout', '-q', fx.base], { cwd: scratch });
    await fs.rm(path.join(scratch, 'core/src'), { recursive: true });
    await fs.symlink(outside, path.join(scratch, 'core/src'));
    await git(['add', '-A'], { cwd: scratch });
    patch = await git(['diff', '--cached', '--binary', 'HEAD'], { cwd: scratch });
    assert.match(patch, /new file mode 120000/);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  for (const isolation of ['none', 'bwrap'] as const) {
    it(
      `local backend (${isolation === 'none' ? 'without' : 'under'} bubblewrap): core/src -> outside is removed, noted, failed`,
      { timeout: 15 * 60_000 },
      async (t) => {
        if (isolation === 'bwrap' && !(await bubblewrapAvailable())) return t.skip('bubblewrap is not available');
        await fs.mkdir(path.dirname(sentinel()), { recursive: true });
        await fs.writeFile(sentinel(), "not the harness's to delete\n");
        const registry = new SuiteRegistry(builtinSuites({ reposDir: fx.reposDir }));
        registry.enable(`swe-bench-java=${fx.dataset}`);
        const { gym, cleanup } = await makeGym({ registry, isolation });
        try {
          const task = await gym.registry.task('swe-bench-java', fx.instanceId);
          const v = await gym.score(task, patch);
          const show = JSON.stringify({ status: v.status, notes: v.notes, error: v.error });
          assert.ok(existsSync(sentinel()), 'the harness deleted a file outside the workspace through the link');
          assert.deepEqual(await fs.readdir(outside), ['test']);
          assert.equal(v.status, 'failed', show);
          assert.equal(v.reward, 0);
          assert.equal(v.error, undefined, show);
          assert.ok(
            v.notes.some((n) => /^CANDIDATE_FILE_REFUSED: core\/src is a symbolic link out of the workspace/.test(n)),
            show,
          );
        } finally {
          await cleanup();
        }
      },
    );
  }
});
