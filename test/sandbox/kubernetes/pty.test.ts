import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeGym, startExample, waitFor } from '../../helpers.ts';
import { kubernetesSkipReason, testFactory } from './skip.ts';

test('a PTY into the episode pod: commands, resize, exit, background jobs gone', async (t) => {
  const skip = await kubernetesSkipReason();
  if (skip) return t.skip(skip);
  const { gym, cleanup } = await makeGym({ sandboxes: testFactory() });
  try {
    const id = await startExample(gym, 'roman-numerals');
    const sandbox = gym.episode(id).sandbox;
    const pty = await sandbox.pty!({ cols: 100, rows: 30 });
    let out = '';
    pty.onData((b) => (out += b.toString()));
    const exited = new Promise<number | null>((resolve) => pty.onExit(resolve));
    pty.write('stty size; ls; sleep 913 &\r');
    await waitFor(() => out, /30 100/);
    await waitFor(() => out, /roman\.py/);
    await pty.resize(132, 40);
    // The kubelet applies a resize asynchronously (its channel is not ordered with stdin's):
    // ask again until the terminal reports the new size, or give up after the deadline.
    const deadline = Date.now() + 15_000;
    while (!/40 132/.test(out)) {
      assert.ok(Date.now() < deadline, `the resize never reached the terminal: ${JSON.stringify(out.slice(-400))}`);
      pty.write('stty size\r');
      await new Promise((r) => setTimeout(r, 500));
    }
    pty.write('exit 3\r');
    assert.equal(await exited, 3);
    // The job went with the shell: seen from a second terminal, in the same terminal container (commands never see it).
    const again = await sandbox.pty!({ cols: 80, rows: 24 });
    let seen = '';
    again.onData((b) => (seen += b.toString()));
    again.write('echo left-$(ps -eo args | grep -c "^sleep 91[3]")-$((6*7))\r');
    await waitFor(() => seen, /left-0-42/);
    await again.kill();
  } finally {
    await cleanup();
  }
});
