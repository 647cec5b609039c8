import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { killGroupIfMarked } from '../../src/sandbox/processes.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function detachedSleep(env: Record<string, string>): number {
  const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
  child.unref();
  return child.pid!;
}

test('killGroupIfMarked signals a group only while a member carries the marker: a reused group number is left alone', async () => {
  // A group led by someone else's process (no marker): what a freed, reused number looks like.
  const foreign = detachedSleep({});
  const marked = detachedSleep({ BENCHGYM_SANDBOX: 'lsb-test-marker' });
  try {
    assert.equal(await killGroupIfMarked(foreign, 'BENCHGYM_SANDBOX', 'lsb-test-marker'), false);
    assert.equal(await killGroupIfMarked(marked, 'BENCHGYM_SANDBOX', 'lsb-other-marker'), false);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(alive(foreign) && alive(marked), 'nothing was signalled');

    assert.equal(await killGroupIfMarked(marked, 'BENCHGYM_SANDBOX', 'lsb-test-marker'), true);
    const deadline = Date.now() + 3000;
    while (alive(marked) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(alive(marked), false, 'our group is gone');
    assert.equal(alive(foreign), true);
    assert.equal(await killGroupIfMarked(undefined, 'BENCHGYM_SANDBOX', 'x'), false);
  } finally {
    for (const pid of [foreign, marked]) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
});
