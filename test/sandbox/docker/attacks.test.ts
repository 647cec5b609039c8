import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { GymError } from '../../../src/errors.ts';
import { DockerSandboxFactory, type DockerSandbox } from '../../../src/sandbox/docker/index.ts';
import { dockerAvailable } from '../../../src/sandbox/docker/client.ts';
import { makeGym, testContext } from '../../helpers.ts';
import { ATTACK_LIMITS, AttackEpisode, checkEndedAsInfraFailure } from '../attacks.cases.ts';
import { describeDocker } from './skip.ts';

/**
 * What only the Docker backend has under attack: its init and executor processes, a container killed by the
 * engine, the engine gone. The attacks every container backend meets are in ../attacks.cases.ts.
 */
describeDocker('docker sandbox under attack', async () => {
  const e = new AttackEpisode(
    () => new DockerSandboxFactory({ serverId: `test-attack-${randomBytes(4).toString('hex')}`, limits: ATTACK_LIMITS }),
    'roman-numerals',
  );

  test(
    'commands run as the sandbox uid; PID 1, its sleep and the executor stay root, out of their reach; ' +
      "the tools' files are the commands'",
    async () => {
      const r = await e.run(
        'id -u; id -g; grep CapEff /proc/self/status; ' +
          'ps -eo user=,args= | grep -E "^[^ ]+ +(/sbin/docker-init|sleep infinity|/.benchgym-executor)" | sort',
      );
      const [uid, gid, capEff, ...owners] = r.stdout.trim().split('\n');
      assert.deepEqual([uid, gid], ['65534', '65534']);
      assert.match(capEff!, /^CapEff:\s+0+$/);
      assert.equal(owners.length, 3, r.stdout);
      for (const line of owners) assert.match(line, /^root /, line);
      // What the file tools write is the commands' to change, as what the commands write is.
      await e.call('create_file', { path: 'made/by/tool.txt', content: 'one\n' });
      const owned = await e.run(
        'stat -c %u:%g . made made/by made/by/tool.txt roman.py && echo two >> made/by/tool.txt && rm -r made && echo changed',
      );
      assert.equal(owned.stdout, '65534:65534\n'.repeat(5) + 'changed\n', owned.stderr);
    },
  );

  test('docker kill gives SANDBOX_UNAVAILABLE, never a wrong answer', async () => {
    await (e.episode.sandbox as DockerSandbox).transport.container.kill();
    await checkEndedAsInfraFailure(e, 'roman.py', /stopped/);
    await e.restart();
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
