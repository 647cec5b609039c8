import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import { memoryCgroupFile, oomKillsOf } from '../../../src/sandbox/docker/oom.ts';
import { killedByMemoryLimit, OOM_NOTE } from '../../../src/sandbox/memory_limit.ts';
import type { Sandbox } from '../../../src/sandbox/types.ts';
import { describeDocker } from './skip.ts';
import { baseImageName } from '../../../src/env/images.ts';

/** A command the container's memory limit killed is marked by the backend (the kernel's count), on both exec paths. */

test('the memory cgroup of a container process, for either cgroup version and driver', () => {
  const v1 = '12:pids:/docker/abc\n9:memory:/docker/abc\n1:name=systemd:/docker/abc\n';
  assert.equal(memoryCgroupFile(v1), '/sys/fs/cgroup/memory/docker/abc/memory.oom_control');
  assert.equal(
    memoryCgroupFile('5:cpu,memory:/system.slice/docker-abc.scope\n', '/cg'),
    '/cg/memory/system.slice/docker-abc.scope/memory.oom_control',
  );
  assert.equal(memoryCgroupFile('0::/system.slice/docker-abc.scope\n'), '/sys/fs/cgroup/system.slice/docker-abc.scope/memory.events');
  assert.equal(memoryCgroupFile('3:cpu:/x\n'), null, 'no memory controller, no unified line: unknown');
  assert.equal(oomKillsOf('oom_kill_disable 0\nunder_oom 0\noom_kill 3\n'), 3);
  assert.equal(oomKillsOf('low 0\nhigh 0\nmax 7\noom 2\noom_kill 2\noom_group_kill 0\n'), 2);
  assert.equal(oomKillsOf('oom_kill_disable 0\nunder_oom 0\n'), 0, 'a kernel without the counter');
});

describeDocker('docker sandbox: commands the memory limit killed', async () => {
  let sb: Sandbox;

  before(async () => {
    const factory = new DockerSandboxFactory({
      serverId: `test-oom-${randomBytes(4).toString('hex')}`,
      poolSize: 0,
      limits: { memoryBytes: 256 * 1024 ** 2 },
    });
    sb = await factory.create({ seed: {}, env: { image: baseImageName('python', '3.11') } });
  });
  after(async () => {
    await sb?.destroy().catch(() => {});
  });

  test('a gigabyte under 256 MiB is killed and marked; the next command is not; the sandbox lives on', async () => {
    const r = await sb.exec("python3 -c \"x = bytearray(1024**3); x[::4096] = b'x' * len(x[::4096]); print('allocated')\"", {
      timeoutMs: 60_000,
    });
    assert.notEqual(r.exitCode, 0, 'a gigabyte was allocated under a 256 MiB limit');
    assert.doesNotMatch(r.stdout, /allocated/);
    assert.equal(killedByMemoryLimit(r), true, r.stderr);
    assert.ok(r.stderr.includes(OOM_NOTE), r.stderr);
    const next = await sb.exec('echo alive');
    assert.equal(next.stdout, 'alive\n');
    assert.equal(killedByMemoryLimit(next), false);
    // A second kill is seen too (a flag that stays set could not tell it).
    const again = await sb.exec('python3 -c "x = bytearray(1024**3); x[::4096] = b\'x\' * len(x[::4096])"', { timeoutMs: 60_000 });
    assert.equal(killedByMemoryLimit(again), true, again.stderr);
  });

  test('printing the note does not mark a command', async () => {
    const r = await sb.exec(`echo "${OOM_NOTE}" >&2; exit 137`);
    assert.equal(killedByMemoryLimit(r), false);
  });
});
