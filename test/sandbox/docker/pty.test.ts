import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import { makeGym, startExample, waitFor } from '../../helpers.ts';
import { dockerSkipReason } from './skip.ts';

test('a PTY into the episode container: commands, resize, exit', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const { gym, cleanup } = await makeGym({ sandboxes: new DockerSandboxFactory({ serverId: `test-pty-${randomBytes(4).toString('hex')}` }) });
  try {
    const id = await startExample(gym, 'roman-numerals');
    const pty = await gym.episode(id).sandbox.pty!({ cols: 100, rows: 30 });
    let out = '';
    pty.onData((b) => (out += b.toString()));
    const exited = new Promise<number | null>((resolve) => pty.onExit(resolve));
    pty.write('stty size; ls\r');
    await waitFor(() => out, /30 100/);
    await waitFor(() => out, /roman\.py/);
    await pty.resize(132, 40);
    pty.write('stty size\r');
    await waitFor(() => out, /40 132/);
    pty.write('exit 3\r');
    assert.equal(await exited, 3);
  } finally {
    await cleanup();
  }
});
