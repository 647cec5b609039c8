import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { Gym } from '../../../src/episode/gym.ts';
import { GymError } from '../../../src/errors.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import { dockerAvailable } from '../../../src/sandbox/docker/client.ts';
import { makeGym, startExample, testContext } from '../../helpers.ts';
import { describeDocker } from './skip.ts';

/** Hostile commands inside a sandbox, each bounded in time; the host and the episode survive. */
describeDocker('docker sandbox under attack', async () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let factory: DockerSandboxFactory;
  let id: string;
  // No onOutput: a flood must not be collected by the test itself.
  const quiet = () => ({ ...testContext(), onOutput: undefined });
  const run = async (command: string, timeout_s = 30) =>
    (await gym.callTool('run_command', { command, timeout_s }, quiet(), id)).data as Record<string, any>;

  before(async () => {
    factory = new DockerSandboxFactory({
      serverId: `test-attack-${randomBytes(4).toString('hex')}`,
      limits: { memoryBytes: 256 * 1024 ** 2, pids: 64, workspaceBytes: 64 * 1024 ** 2, tmpBytes: 32 * 1024 ** 2 },
    });
    ({ gym, cleanup } = await makeGym({ sandboxes: factory }));
    id = await startExample(gym, 'roman-numerals');
  });
  after(async () => cleanup());

  test('a fork bomb hits the pids limit and ends at the timeout', async () => {
    const t0 = Date.now();
    await run(':(){ :|:& };:', 5);
    assert.ok(Date.now() - t0 < 20_000, `returned after ${Date.now() - t0} ms`);
    const after = await run('echo alive; ps -e --no-headers | wc -l');
    const [alive, count] = after.stdout.trim().split('\n');
    assert.equal(alive, 'alive');
    assert.ok(Number(count) < 10, `${count} processes left in the sandbox`);
  });

  test('allocating far more memory than the limit is killed, the sandbox lives on', async () => {
    const r = await run('python -c "x = bytearray(2 * 1024**3); print(len(x))"', 30);
    assert.notEqual(r.exitCode, 0);
    assert.doesNotMatch(r.stdout, /2147483648/);
    assert.equal((await run('echo alive')).stdout, 'alive\n');
  });

  test('output floods are capped and bounded in time', async () => {
    const yes = await run('yes', 3);
    assert.equal(yes.timedOut, true);
    assert.ok(yes.totalBytes.stdout > 1_000_000);
    assert.ok(yes.stdout.length < 1_000_000);
    const rss = process.memoryUsage().rss;
    // 2 GiB through the exec stream: several times the memory bound below (5 GiB took over
    // the 120 s limit on a loaded 2-core machine).
    const big = await run('head -c 2G /dev/zero', 120);
    assert.equal(big.timedOut, false);
    assert.equal(big.totalBytes.stdout, 2 * 1024 ** 3);
    assert.ok(process.memoryUsage().rss - rss < 300 * 1024 ** 2, 'server memory stays bounded');
  });

  test('filling the workspace or /tmp stops at their size, not the host disk', async () => {
    const ws = await run('dd if=/dev/zero of=fill bs=1M count=500 2>&1; ls -l fill | cut -d" " -f5; rm -f fill', 60);
    assert.match(ws.stdout, /No space left on device/);
    const size = Number(ws.stdout.trim().split('\n').at(-1));
    assert.ok(size <= 64 * 1024 ** 2, `wrote ${size} bytes`);
    const tmp = await run('dd if=/dev/zero of=/tmp/fill bs=1M count=500 2>&1; rm -f /tmp/fill', 60);
    assert.match(tmp.stdout, /No space left on device/);
    const root = await run('touch /usr/evil 2>&1 || echo refused');
    assert.match(root.stdout, /Read-only file system|refused/);
  });

  test(
    'commands run as the sandbox uid; PID 1, its sleep and the executor stay root, out of their reach; ' +
      "the tools' files are the commands'",
    async () => {
      const r = await run(
        'id -u; id -g; grep CapEff /proc/self/status; ps -eo user=,args= | ' +
          'grep -E "^[^ ]+ +(/sbin/docker-init|sleep infinity|/.benchgym-executor)" | sort',
      );
      const [uid, gid, capEff, ...owners] = r.stdout.trim().split('\n');
      assert.deepEqual([uid, gid], ['65534', '65534']);
      assert.match(capEff!, /^CapEff:\s+0+$/);
      assert.equal(owners.length, 3, r.stdout);
      for (const line of owners) assert.match(line, /^root /, line);
      // What the file tools write is the commands' to change, as what the commands write is.
      await gym.callTool('create_file', { path: 'made/by/tool.txt', content: 'one\n' }, quiet(), id);
      const owned = await run(
        'stat -c %u:%g . made made/by made/by/tool.txt roman.py && echo two >> made/by/tool.txt && rm -r made && echo changed',
      );
      assert.equal(owned.stdout, '65534:65534\n'.repeat(5) + 'changed\n', owned.stderr);
    },
  );

  test('kill -9 1 cannot take the sandbox down; docker kill gives SANDBOX_UNAVAILABLE, never a wrong answer', async () => {
    await run('kill -9 1; sleep 0.5; true');
    assert.equal((await run('echo alive')).stdout, 'alive\n', 'PID 1 of a PID namespace ignores SIGKILL from inside');
    const episode = gym.episode(id);
    const container = (episode.sandbox as unknown as { transport: { container: { kill(): Promise<void> } } }).transport.container;
    await container.kill();
    await assert.rejects(
      gym.callTool('run_command', { command: 'true' }, quiet(), id),
      (err: unknown) => err instanceof GymError && err.code === 'SANDBOX_UNAVAILABLE' && /stopped/.test(err.message),
    );
    // The episode ends as an infrastructure failure: no verdict, nothing scored as wrong.
    assert.equal(episode.state, 'ended');
    assert.equal(episode.verdict, undefined);
    for (const tool of ['view_file', 'submit']) {
      await assert.rejects(
        gym.callTool(tool, tool === 'view_file' ? { path: 'roman.py' } : {}, quiet(), id),
        (err: unknown) => err instanceof GymError && err.code === 'EPISODE_ENDED',
      );
    }
    await episode.trajectory.flush();
    const records = (await fs.readFile(episode.trajectory.file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.ok(records.some((r) => r.type === 'end' && r.infraError?.code === 'SANDBOX_UNAVAILABLE'));
    id = await startExample(gym, 'roman-numerals');
  });

  test('the Docker daemon unreachable: a clear error per call', async () => {
    const Docker = (await import('dockerode')).default;
    const broken = new DockerSandboxFactory({ docker: new Docker({ socketPath: '/nonexistent/docker.sock' }), serverId: 'test-broken' });
    const { gym: g, cleanup: c } = await makeGym({ sandboxes: broken });
    try {
      await assert.rejects(broken.init(), /Docker daemon is not reachable/);
      await assert.rejects(
        g.callTool('start_episode', { task_id: 'roman-numerals' }, testContext()),
        (err: unknown) => err instanceof GymError && err.code === 'SANDBOX_UNAVAILABLE',
      );
    } finally {
      await c();
    }
    assert.ok(await dockerAvailable(), 'the real daemon is still fine');
  });
});
