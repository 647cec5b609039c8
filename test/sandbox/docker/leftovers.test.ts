import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Gym } from '../../../src/episode/gym.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import type { Sandbox } from '../../../src/sandbox/types.ts';
import { makeGym, startExample, waitFor } from '../../helpers.ts';
import { describeDocker } from './skip.ts';

/** What a command leaves running in the background is killed when it ends; terminals and other commands are not touched. */
describeDocker('docker sandbox: leftover processes', async () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let sandbox: Sandbox;

  before(async () => {
    ({ gym, cleanup } = await makeGym({
      sandboxes: new DockerSandboxFactory({ serverId: `test-leftovers-${randomBytes(4).toString('hex')}` }),
    }));
    sandbox = gym.episode(await startExample(gym, 'roman-numerals')).sandbox;
  });
  after(async () => cleanup());

  const sleeps = async () =>
    (await sandbox.exec('ps -eo args')).stdout
      .split('\n')
      .filter((l) => /^sleep 20\d\d/.test(l))
      .map((l) => l.trim());

  test('sleep & and setsid env -i sleep & are gone after their command; a terminal job and a running command are not', async () => {
    const pty = await sandbox.pty!({ cols: 80, rows: 24 });
    let out = '';
    pty.onData((b) => (out += b.toString()));
    const running = new AbortController();
    const concurrent = sandbox.exec('sleep 2002', { signal: running.signal, timeoutMs: 120_000 }).catch(() => null);
    try {
      pty.write('sleep 2001 &\r echo started-$((6*7))\r');
      await waitFor(() => out, /started-42/);
      const r = await sandbox.exec(
        'sleep 2003 >/dev/null 2>&1 & setsid env -i sleep 2004 >/dev/null 2>&1 & sh -c "sleep 2005 >/dev/null 2>&1 &"; echo ok',
      );
      assert.equal(r.stdout, 'ok\n');
      const left = await sleeps();
      assert.deepEqual(
        left.filter((l) => /^sleep 200[345]/.test(l)),
        [],
        `left running after their command: ${left.join(', ')}`,
      );
      assert.ok(left.includes('sleep 2002'), `the concurrent command was killed: ${left.join(', ')}`);
      // The terminal runs in a container of its own: its job is not the commands' to see, and lives on.
      assert.ok(!left.includes('sleep 2001'), `a command sees the terminal's processes: ${left.join(', ')}`);
      pty.write('echo job-$(ps -eo args | grep -c "^sleep 200[1]")-$((7*7))\r');
      await waitFor(() => out, /job-1-49/);
    } finally {
      running.abort();
      await concurrent;
      await pty.kill();
    }
  });
});
