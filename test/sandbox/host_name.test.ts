/**
 * The sandbox's own host name resolves as a container's does: to an address of its own, not to
 * the loopback literal (CoderEval's cloudmesh `is_local` samples compare `gethostbyname(host)`
 * with '127.0.0.1'), without DNS, and reachable (code may serve on its own name). The same on
 * the local backend under bubblewrap and on Docker; the host's /etc/hosts is not the sandbox's.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Gym } from '../../src/episode/gym.ts';
import { DockerSandboxFactory } from '../../src/sandbox/docker/index.ts';
import { SANDBOX_HOST_ADDRESS, SANDBOX_HOSTNAME, SANDBOX_HOSTS_FILE } from '../../src/sandbox/host_name.ts';
import { bubblewrapAvailable } from '../../src/sandbox/local/bubblewrap.ts';
import type { SandboxFactory } from '../../src/sandbox/types.ts';
import { makeGym, startExample, testContext } from '../helpers.ts';
import { dockerSkipReason } from './docker/skip.ts';

test('the hosts file the local sandbox mounts names the sandbox at its address, and localhost at loopback', () => {
  const hosts = readFileSync(SANDBOX_HOSTS_FILE, 'utf8');
  assert.match(hosts, new RegExp(`^${SANDBOX_HOST_ADDRESS.replace(/\./g, '\\.')}\\t${SANDBOX_HOSTNAME}$`, 'm'));
  assert.match(hosts, /^127\.0\.0\.1\tlocalhost$/m);
  assert.notEqual(SANDBOX_HOST_ADDRESS, '127.0.0.1');
});

const BACKENDS: { name: string; skip: () => Promise<string | null>; factory: () => SandboxFactory | undefined }[] = [
  {
    name: 'local',
    skip: async () =>
      (await bubblewrapAvailable()) ? null : "bubblewrap is not available: the local sandbox shares the host's name and /etc/hosts",
    factory: () => undefined,
  },
  {
    name: 'docker',
    skip: dockerSkipReason,
    factory: () => new DockerSandboxFactory({ serverId: `test-${randomBytes(4).toString('hex')}`, poolSize: 0 }),
  },
];

/** What a sample of is_local and the platform's own test look at, and a server on the sandbox's own name. */
const PROBE = `python -c "
import socket, platform, threading
name = socket.gethostname()
print('name', name, platform.node())
print('addr', socket.gethostbyname(name), socket.gethostbyname('localhost'))
print('byaddr', socket.gethostbyaddr(name)[0])
srv = socket.socket(); srv.bind((name, 0)); srv.listen(1)
threading.Thread(target=lambda: srv.accept()[0].sendall(b'pong'), daemon=True).start()
print('served', socket.create_connection((name, srv.getsockname()[1]), timeout=5).recv(4).decode())
"`;

for (const backend of BACKENDS) {
  describe(`the sandbox's own host name: ${backend.name}`, async () => {
    const skip = await backend.skip();
    if (skip) {
      test(`skipped: ${skip}`, { skip }, () => {});
      return;
    }
    let gym: Gym;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ gym, cleanup } = await makeGym({ sandboxes: backend.factory() }));
    });
    after(async () => cleanup());

    test(
      `named ${SANDBOX_HOSTNAME}, resolved to ${SANDBOX_HOST_ADDRESS} without DNS ` + '(not the loopback literal), and reachable',
      async () => {
        const id = await startExample(gym, 'roman-numerals');
        const r = (await gym.callTool('run_command', { command: PROBE, timeout_s: 60 }, testContext(), id)).data as {
          stdout: string;
          stderr: string;
          exitCode: number;
        };
        assert.equal(r.exitCode, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`^name ${SANDBOX_HOSTNAME} ${SANDBOX_HOSTNAME}$`, 'm'));
        assert.match(r.stdout, new RegExp(`^addr ${SANDBOX_HOST_ADDRESS.replace(/\./g, '\\.')} 127\\.0\\.0\\.1$`, 'm'));
        assert.match(r.stdout, new RegExp(`^byaddr ${SANDBOX_HOSTNAME}$`, 'm'));
        assert.match(r.stdout, /^served pong$/m);
      },
    );
  });
}
