import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { CgroupDriver, ownerDead, ownerPrefix } from '../../../src/sandbox/local/cgroup.ts';
import { processAlive } from '../../helpers.ts';

const alive = processAlive;

test('owner names: this server is alive, a dead pid or another start time is not, foreign names are left alone', () => {
  assert.equal(ownerDead(`${ownerPrefix()}lsb-1`), false);
  assert.equal(ownerDead(ownerPrefix().replace(/-(\d+)-$/, '-1$1-') + 'lsb-1'), true);
  assert.equal(ownerDead('something-else'), false);
});

for (const mode of ['v1', 'v2'] as const) {
  test(`cgroup ${mode}: a command joins before it execs; killAll finds setsid env -i escapees; remove() leaves nothing`, async (t) => {
    const driver = await CgroupDriver.detect(mode);
    if (!driver) return t.skip(`no writable cgroup ${mode} hierarchy here`);
    const sandbox = await driver.createSandbox(`lsb-test-${randomBytes(3).toString('hex')}`, { pids: 64, memoryBytes: 256 * 1024 ** 2 });
    const leaf = await sandbox.child();
    try {
      const join = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';
      const child = spawn(
        '/bin/sh',
        ['-c', join, 'j', ...leaf.procsFiles, '--', 'sh', '-c', 'setsid env -i sleep 1000 </dev/null >/dev/null 2>&1 & echo $!'],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      await new Promise((r) => child.once('close', r));
      const escapee = Number(out.trim());
      assert.ok(escapee > 0 && alive(escapee));
      assert.ok((await sandbox.pids()).includes(escapee), 'the escapee is not in the sandbox cgroup');
      await leaf.killAll();
      for (let i = 0; i < 30 && alive(escapee); i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(alive(escapee), false);
    } finally {
      await sandbox.remove();
    }
    for (const dir of sandbox.dirs.values()) assert.equal(existsSync(dir), false, `${dir} is left`);
  });
}
