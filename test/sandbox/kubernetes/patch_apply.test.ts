import { after, before, describe, test } from 'node:test';
import { baseImageName } from '../../../src/env/images.ts';
import type { KubernetesSandboxFactory } from '../../../src/sandbox/kubernetes/index.ts';
import type { Sandbox } from '../../../src/sandbox/types.ts';
import {
  checkGitDirRefused,
  checkLinkIntoGitDir,
  checkLinksOut,
  checkNestedRepository,
  checkPlantedRepository,
  checkResetBetweenTries,
} from '../patch_apply.cases.ts';
import { kubernetesSkipReason, loadIntoCluster, testFactory } from './skip.ts';

const IMAGE = baseImageName('python', '3.11');

/** The patch-apply chain in a pod: the same script as in a container, run through the pod's exec channel. */
describe('kubernetes sandbox: applyPatch by a chain', async () => {
  const skip = await kubernetesSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  let factory: KubernetesSandboxFactory;
  before(async () => {
    factory = testFactory();
    await loadIntoCluster(IMAGE);
  });
  after(async () => factory?.close());

  const it = (name: string, check: (sb: Sandbox) => Promise<void>) =>
    test(name, { timeout: 5 * 60_000 }, async () => {
      const sb = await factory.create({ seed: {}, env: { image: IMAGE } });
      try {
        await check(sb);
      } finally {
        await sb.destroy();
      }
    });

  it('resetBetweenTries puts the start state back after each failed try', checkResetBetweenTries);
  it('the 3-way try and the resets run nothing planted in the workspace repository or home', (sb) => checkPlantedRepository(sb, '/tmp/marks'));
  it('no method writes inside a .git, in any format: refused by the names, and by the script alone', checkGitDirRefused);
  it('a start-state link into .git is out of reach during the tries: the patch is refused', checkLinkIntoGitDir);
  it('nothing is written through a link out of the workspace, the start state\'s or the patch\'s own', checkLinksOut);
  it('a repository nested in the start state is put aside and back: a patch beside it applies, one into it is refused', checkNestedRepository);
});
