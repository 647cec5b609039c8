import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Gym } from '../../../src/episode/gym.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import type { Sandbox } from '../../../src/sandbox/types.ts';
import { makeGym, startExample } from '../../helpers.ts';
import { assertWorkApplied, assertWorkDiff, HOOKS, HOSTILE_REPOSITORY_CONFIG, plantScript, WORK } from '../git_plant.ts';
import { describeDocker } from './skip.ts';

/**
 * git runs inside the container, but with the same isolation as on the host: the agent's
 * HOME (/tmp), its .gitattributes, and even hooks and config it writes into the baseline
 * repository (under /tmp, writable in the container: every key that names a program, gpg
 * signing, a diff without prefixes or in colour) neither run its scripts nor change what
 * the diff says.
 */
describeDocker('docker sandbox: git over the workspace takes no orders from the agent', async () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  const MARKS = '/tmp/marks';
  const SETUP = `mkdir -p ${MARKS} && printf 'one\\ntwo\\nthree\\n' > a.txt && ${plantScript(MARKS)}
cat >> /tmp/.benchgym/baseline.git/config <<EOF
[core]
${HOSTILE_REPOSITORY_CONFIG}
EOF
for h in ${HOOKS.join(' ')}; do cp "$HOME/evil" "/tmp/.benchgym/baseline.git/hooks/$h"; done
`;

  before(async () => {
    const factory = new DockerSandboxFactory({ serverId: `test-gitiso-${randomBytes(4).toString('hex')}`, poolSize: 0 });
    ({ gym, cleanup } = await makeGym({ sandboxes: factory }));
  });
  after(async () => cleanup());

  const sandboxOf = async (): Promise<Sandbox> => gym.episode(await startExample(gym, 'roman-numerals')).sandbox;
  const ran = async (sb: Sandbox) => (await sb.exec(`cat ${MARKS}/ran 2>/dev/null || true`)).stdout.trim();

  test('commitBaseline, diff and applyPatch run none of the planted scripts, and the diff is what changed', async () => {
    const source = await sandboxOf();
    const planted = await source.exec(SETUP);
    assert.equal(planted.exitCode, 0, planted.stderr);
    await source.commitBaseline();
    const work = await source.exec(WORK);
    assert.equal(work.exitCode, 0, work.stderr);
    const diff = await source.diff();
    assert.equal(await ran(source), '', 'a planted script ran');
    assertWorkDiff(diff);

    const target = await sandboxOf();
    const plantedTarget = await target.exec(SETUP);
    assert.equal(plantedTarget.exitCode, 0, plantedTarget.stderr);
    await assertWorkApplied(target, diff);
    assert.equal(await ran(target), '', 'a planted script ran');
  });
});
