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
    pty.write('stty size\r');
    await waitFor(() => out, /40 132/);
    pty.write('exit 3\r');
    assert.equal(await exited, 3);
    const left = await sandbox.exec("ps -eo args | grep -c '^sleep 913' || true");
    assert.equal(left.stdout.trim(), '0');
  } finally {
    await cleanup();
  }
});
