import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { baseImageName } from '../../../src/env/images.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import type { Sandbox } from '../../../src/sandbox/types.ts';
import { checkFuzz, checkGitDirRefused, checkLinkIntoGitDir, checkLinksOut, checkNestedRepository, checkPlantedRepository, checkResetBetweenTries, checkThreeWay } from '../patch_apply.cases.ts';
import { describeDocker } from './skip.ts';

/** The same chain as data in a container; there the baseline is in reach, so a workspace without a repository resets to it. */
describeDocker('docker sandbox: applyPatch by a chain', async () => {
  let factory: DockerSandboxFactory;
  before(() => {
    factory = new DockerSandboxFactory({ serverId: `test-patchapply-${randomBytes(4).toString('hex')}`, poolSize: 0 });
  });
  after(async () => factory.close());

  const it = (name: string, check: (sb: Sandbox) => Promise<void>) =>
    test(name, async () => {
      const sb = await factory.create({ seed: {}, env: { image: baseImageName('python', '3.11') } });
      try {
        await check(sb);
      } finally {
        await sb.destroy();
      }
    });

  it('a patch only --3way applies: a chain without it fails, one with it applies', checkThreeWay);
  it('a patch only fuzz applies: a chain without enough fuzz fails, one with it applies', checkFuzz);
  it('resetBetweenTries puts the start state back after each failed try', checkResetBetweenTries);
  it('the 3-way try and the resets run nothing planted in the workspace repository or home', (sb) => checkPlantedRepository(sb, '/tmp/marks'));
  it('no method writes inside a .git, in any format: refused by the names, and by the script alone', checkGitDirRefused);
  it('a start-state link into .git is out of reach during the tries: the patch is refused', checkLinkIntoGitDir);
  it('nothing is written through a link out of the workspace, the start state\'s or the patch\'s own', checkLinksOut);
  it('a repository nested in the start state is put aside and back: a patch beside it applies, one into it is refused', checkNestedRepository);

  it('without a repository in the workspace, the resets go back to the baseline', async (sb) => {
    await sb.writeFile('a.txt', 'one\ntwo\nthree\n');
    await sb.commitBaseline();
    await sb.writeFile('a.txt', 'one\nTWO\nthree\n');
    const patch = '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-bee\n+BEE\n';
    const r = await sb.applyPatch(patch, { chain: [{ kind: 'git-apply' }, { kind: 'patch', fuzz: 0 }], resetBetweenTries: true });
    assert.equal(r.ok, false, r.log);
    assert.equal((await sb.readFile('a.txt')).toString(), 'one\ntwo\nthree\n', r.log);
    assert.equal(await sb.stat('a.txt.rej'), null);
  });
});
