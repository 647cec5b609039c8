import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Gym } from '../../../src/episode/gym.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import { expectGymError, makeGym, startExample, testContext } from '../../helpers.ts';
import { describeDocker } from './skip.ts';

/** The diff is measured inside the container: one over the limit never crosses into server memory. */
describeDocker('docker sandbox: a diff over the limit is DIFF_TOO_LARGE', async () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  before(async () => {
    const factory = new DockerSandboxFactory({
      serverId: `test-difflimit-${randomBytes(4).toString('hex')}`,
      poolSize: 0,
      limits: { maxDiffBytes: 1024 * 1024 },
    });
    ({ gym, cleanup } = await makeGym({ sandboxes: factory }));
  });
  after(async () => cleanup());

  test('get_diff names the size and the limit; the episode goes on', async () => {
    const id = await startExample(gym, 'roman-numerals');
    const call = (name: string, args: Record<string, unknown> = {}) => gym.callTool(name, args, testContext(), id);
    await call('run_command', { command: "yes 'a line of text for a big file' | head -c 3000000 > big.txt" });
    const err = await expectGymError(
      call('get_diff'),
      'DIFF_TOO_LARGE',
      /diff is 3\d{6} bytes .*over the limit of 1048576 bytes \(1\.0 MiB\)/,
    );
    assert.equal(err.details?.limit, 1024 * 1024);
    await call('run_command', { command: 'rm big.txt && echo small > small.txt' });
    assert.deepEqual(((await call('get_diff')).data as { files: string[] }).files, ['small.txt']);
    assert.equal(((await call('submit')).data as { reward: number }).reward, 0);
  });
});
