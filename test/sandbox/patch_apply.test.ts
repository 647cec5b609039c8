import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bubblewrapAvailable, LocalSandboxFactory } from '../../src/sandbox/local/index.ts';
import { patchApplyScript, patchMethodLabel } from '../../src/sandbox/patch_apply.ts';
import { DEFAULT_PATCH_CHAIN, type Sandbox } from '../../src/sandbox/types.ts';
import { tempDir } from '../helpers.ts';
import {
  checkFuzz,
  checkGitDirRefused,
  checkLinkIntoGitDir,
  checkLinksOut,
  checkNestedRepository,
  checkNoStartState,
  checkPlantedRepository,
  checkResetBetweenTries,
  checkThreeWay,
} from './patch_apply.cases.ts';

describe('the patch-apply chain as data', () => {
  test('the default chain is git apply, git apply --recount, patch --fuzz=3, without resets', () => {
    assert.deepEqual(DEFAULT_PATCH_CHAIN.map(patchMethodLabel), ['git apply', 'git apply --recount', 'patch --fuzz=3']);
    const script = patchApplyScript();
    assert.doesNotMatch(script, /reset_tree|read-tree/);
    assert.match(script, /patch_tool --batch --forward -p1 --fuzz=3 -i "\$p"/);
  });

  test('a fuzz that is not a whole number is refused', () => {
    assert.throws(() => patchApplyScript({ chain: [{ kind: 'patch', fuzz: -1 }] }), /whole number/);
  });
});

for (const mode of ['none', 'bwrap'] as const) {
  describe(`applyPatch by a chain on a '${mode}' local sandbox`, () => {
    let baseDir: string;
    let factory: LocalSandboxFactory | undefined;
    let usable = false;
    let marks: string;

    before(async () => {
      usable = mode === 'none' || (await bubblewrapAvailable());
      baseDir = await tempDir('benchgym-patchapply-');
      // Outside /tmp (bubblewrap mounts a private one), writable by the sandbox's uid.
      marks = await fs.mkdtemp(path.join(existsSync('/var/tmp') ? '/var/tmp' : os.homedir(), 'benchgym-marks-'));
      await fs.chmod(marks, 0o777);
      if (usable) factory = new LocalSandboxFactory({ baseDir, isolation: mode });
    });
    after(async () => {
      await factory?.close();
      await fs.rm(baseDir, { recursive: true, force: true });
      await fs.rm(marks, { recursive: true, force: true });
    });

    const it = (name: string, check: (sb: Sandbox) => Promise<void>) =>
      test(name, async (t: TestContext) => {
        if (!usable) return t.skip('bubblewrap is not usable on this machine');
        const sb = await factory!.create({ seed: {} });
        try {
          await check(sb);
        } finally {
          await sb.destroy();
        }
      });

    it('a patch only --3way applies: a chain without it fails, one with it applies', checkThreeWay);
    it('a patch only fuzz applies: a chain without enough fuzz fails, one with it applies', checkFuzz);
    it('resetBetweenTries puts the start state back after each failed try', checkResetBetweenTries);
    it('the 3-way try and the resets run nothing planted in the workspace repository or home', (sb) => checkPlantedRepository(sb, marks));
    it('resetBetweenTries without a start state to reset to is refused', checkNoStartState);
    it('no method writes inside a .git, in any format: refused by the names, and by the script alone', checkGitDirRefused);
    it('a start-state link into .git is out of reach during the tries: the patch is refused', checkLinkIntoGitDir);
    it("nothing is written through a link out of the workspace, the start state's or the patch's own", checkLinksOut);
    it(
      'a repository nested in the start state is put aside and back: a patch beside it applies, one into it is refused',
      checkNestedRepository,
    );
  });
}
