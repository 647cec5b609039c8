import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bubblewrapAvailable, LocalSandbox, LocalSandboxFactory } from '../../src/sandbox/local/index.ts';
import { tempDir } from '../helpers.ts';
import { assertWorkApplied, assertWorkDiff, plantScript, WORK } from './git_plant.ts';

/**
 * The server runs git (and patch) over an episode's files on the host. Nothing the agent can
 * write (its home, its workspace, a .git in it) may be read by those processes as
 * configuration, hooks or attributes: a planted ~/.gitconfig with core.fsmonitor once ran
 * the agent's script on the host as the server's user.
 */

/** A directory outside /tmp (bubblewrap mounts a private /tmp): where the planted script leaves its marks. */
async function hostDir(prefix: string): Promise<string> {
  const parent = existsSync('/var/tmp') ? '/var/tmp' : os.homedir();
  return fs.mkdtemp(path.join(parent, prefix));
}

for (const mode of ['none', 'bwrap'] as const) {
  describe(`host git over a '${mode}' local sandbox takes no orders from the agent's files`, () => {
    let baseDir: string;
    let marks: string;
    let factory: LocalSandboxFactory | undefined;
    let usable = false;

    before(async () => {
      usable = mode === 'none' || (await bubblewrapAvailable());
      baseDir = await tempDir('benchgym-gitiso-');
      marks = await hostDir('benchgym-marks-');
      await fs.chmod(marks, 0o777);
      if (usable) factory = new LocalSandboxFactory({ baseDir, isolation: mode });
    });
    after(async () => {
      await factory?.close();
      await fs.rm(baseDir, { recursive: true, force: true });
      await fs.rm(marks, { recursive: true, force: true });
    });

    const it = (name: string, fn: () => Promise<void>) =>
      test(name, async (t: TestContext) => {
        if (!usable) return t.skip('bubblewrap is not usable on this machine');
        await fn();
      });
    const create = async () => (await factory!.create({ seed: { files: { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n' } } })) as LocalSandbox;
    const ran = async () => (await fs.readFile(path.join(marks, 'ran'), 'utf8').catch(() => '')).trim();

    it('commitBaseline, diff and applyPatch run none of the planted scripts, and the diff is what changed', async () => {
      const source = await create();
      const target = await create();
      try {
        const planted = await source.exec(plantScript(marks));
        assert.equal(planted.exitCode, 0, planted.stderr);
        await source.commitBaseline();
        const work = await source.exec(WORK);
        assert.equal(work.exitCode, 0, work.stderr);
        const diff = await source.diff();
        assert.equal(await ran(), '', 'a planted script ran on the host');
        assertWorkDiff(diff);

        const plantedTarget = await target.exec(plantScript(marks));
        assert.equal(plantedTarget.exitCode, 0, plantedTarget.stderr);
        await assertWorkApplied(target, diff);
        assert.equal(await ran(), '', 'a planted script ran on the host');
      } finally {
        await Promise.all([source.destroy(), target.destroy()]);
      }
    });

    it('a patch cannot write through a symbolic link it creates, out of the workspace', async () => {
      const target = await create();
      const outside = await hostDir('benchgym-out-');
      try {
        const patch = [
          'diff --git a/link b/link',
          'new file mode 120000',
          '--- /dev/null',
          '+++ b/link',
          '@@ -0,0 +1 @@',
          `+${outside}`,
          '\\ No newline at end of file',
          'diff --git a/link/pwned.txt b/link/pwned.txt',
          'new file mode 100644',
          '--- /dev/null',
          '+++ b/link/pwned.txt',
          '@@ -0,0 +1 @@',
          '+pwned',
          '',
        ].join('\n');
        await target.applyPatch(patch);
        assert.deepEqual(await fs.readdir(outside), []);
      } finally {
        await target.destroy();
        await fs.rm(outside, { recursive: true, force: true });
      }
    });
  });
}
