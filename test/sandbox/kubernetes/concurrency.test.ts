import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeGym, startExample, testContext } from '../../helpers.ts';
import { kubernetesSkipReason, testFactory } from './skip.ts';

test('32 concurrent episodes on the cluster, each running a command, without an error', async (t) => {
  const skip = await kubernetesSkipReason();
  if (skip) return t.skip(skip);
  const { gym, cleanup } = await makeGym({
    sandboxes: testFactory({ maxPods: 32, limits: { memoryBytes: 256 * 1024 ** 2, requestCpuMillis: 25 } }),
  });
  // The node has 2 CPUs: 32 pods reserving 100m each would not fit (FailedScheduling, as SANDBOX_UNAVAILABLE).
  try {
    // The image is built and loaded once, before the burst.
    await startExample(gym, 'roman-numerals');
    const t0 = Date.now();
    const ids = await Promise.all(Array.from({ length: 31 }, () => startExample(gym, 'roman-numerals')));
    const started = Date.now() - t0;
    const outs = await Promise.all(
      ids.map(
        async (id, i) =>
          (await gym.callTool('run_command', { command: `echo episode-${i}; ls roman.py` }, { ...testContext(), onOutput: undefined }, id))
            .data as { stdout: string; exitCode: number },
      ),
    );
    outs.forEach((r, i) => {
      assert.equal(r.exitCode, 0);
      assert.equal(r.stdout, `episode-${i}\nroman.py\n`);
    });
    t.diagnostic(`31 episodes started concurrently in ${started} ms (32 live)`);
  } finally {
    await cleanup();
  }
});
