import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import type { Episode } from '../../src/episode/episode.ts';
import type { Gym } from '../../src/episode/gym.ts';
import type { SandboxFactory } from '../../src/sandbox/types.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';
import { type ContainerBackendKit } from './container_backends.ts';

/**
 * Hostile commands in a container sandbox, through a gym's tools, run over each container backend
 * (attacks_<backend>.test.ts): escapes, bombs, floods, timeouts, no network. Each is bounded in time;
 * the sandbox and the episode survive, and the container is the same one, never restarted.
 * What one backend alone has (Docker's container kill, the pod's service account) stays in its folder.
 */

const MiB = 1024 ** 2;

/** The limits the attacks run into: small, so that hitting them is quick. */
export const ATTACK_LIMITS = { memoryBytes: 256 * MiB, pids: 64, workspaceBytes: 64 * MiB, tmpBytes: 32 * MiB };

/** A gym on `sandboxes` with one episode of the example `task`, set up and torn down by the enclosing describe. */
export class AttackEpisode {
  gym!: Gym;
  id!: string;
  private cleanup?: () => Promise<void>;

  constructor(
    sandboxes: () => SandboxFactory,
    readonly task: string,
  ) {
    before(async () => {
      ({ gym: this.gym, cleanup: this.cleanup } = await makeGym({ sandboxes: sandboxes() }));
      this.id = await startExample(this.gym, task);
    });
    after(async () => this.cleanup?.());
  }

  get episode(): Episode {
    return this.gym.episode(this.id);
  }

  /** A tool call on the episode; no onOutput: a flood must not be collected by the test itself. */
  call(tool: string, args: Record<string, unknown> = {}) {
    return this.gym.callTool(tool, args, { ...testContext(), onOutput: undefined }, this.id);
  }

  async run(command: string, timeout_s = 30): Promise<Record<string, any>> {
    return (await this.call('run_command', { command, timeout_s })).data as Record<string, any>;
  }

  /** A new episode of the same task, after the last one ended. */
  async restart(): Promise<void> {
    this.id = await startExample(this.gym, this.task);
  }
}

/**
 * The episode lost its sandbox (killed from outside): the call fails with SANDBOX_UNAVAILABLE, and the episode
 * ends as an infrastructure failure: no verdict, nothing scored as wrong, the trajectory says why.
 */
export async function checkEndedAsInfraFailure(e: AttackEpisode, file: string, message?: RegExp): Promise<void> {
  const episode = e.episode;
  await expectGymError(e.call('run_command', { command: 'true' }), 'SANDBOX_UNAVAILABLE', message);
  assert.equal(episode.state, 'ended');
  assert.equal(episode.verdict, undefined);
  await expectGymError(e.call('view_file', { path: file }), 'EPISODE_ENDED');
  await expectGymError(e.call('submit'), 'EPISODE_ENDED');
  await episode.trajectory.flush();
  const records = (await fs.readFile(episode.trajectory.file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.ok(records.some((r) => r.type === 'end' && r.infraError?.code === 'SANDBOX_UNAVAILABLE'));
}

/** What differs between backends in these cases: how long a step through them may take. */
export interface AttackBounds {
  /** A fork bomb under a 5 s timeout returns within this. */
  forkBombMs: number;
  /** The bytes of the large output flood: several times the server's memory bound, within its 120 s timeout. */
  floodBytes: number;
}

export function containerAttacks(kit: ContainerBackendKit, bounds: AttackBounds): void {
  describe(`${kit.name} sandbox under attack`, async () => {
    const skip = await kit.skip();
    if (skip) {
      test(`skipped: ${skip}`, { skip }, () => {});
      return;
    }
    // Not roman-numerals: the Kubernetes registry test pulls that image under another name, and the
    // kubelet's pulled-image records then refuse it to pods with imagePullPolicy Never.
    const e = new AttackEpisode(() => kit.factory({ limits: ATTACK_LIMITS }), 'parse-duration');
    let instance: string;
    before(async () => {
      instance = await kit.instance(e.episode.sandbox);
      assert.match(instance, / restarts 0$/);
    });
    /** The episode's container is the one it started with, never restarted. */
    const sameContainer = async () => assert.equal(await kit.instance(e.episode.sandbox), instance);

    test('escapes: .., absolute paths, symlinks and /proc links out of the workspace are refused by every file tool', async () => {
      await e.run(
        'ln -s / rootlink; ln -s /etc/passwd pw; ln -s /proc/1/root p1root; ln -s /proc/self/root/etc selfetc; ln -s rootlink/etc chained',
      );
      const outside = [
        '../../etc/passwd',
        '/etc/passwd',
        'rootlink/etc/passwd',
        'pw',
        '../x',
        'p1root/etc/passwd',
        'selfetc/passwd',
        'chained/passwd',
        '/proc/self/environ',
        '/proc/1/root/etc/passwd',
      ];
      for (const p of outside) {
        await expectGymError(e.call('view_file', { path: p }), 'PATH_OUTSIDE_WORKSPACE');
        await expectGymError(e.call('create_file', { path: p, content: 'x', overwrite: true }), 'PATH_OUTSIDE_WORKSPACE');
      }
      for (const p of ['rootlink', 'p1root', 'selfetc']) await expectGymError(e.call('list_dir', { path: p }), 'PATH_OUTSIDE_WORKSPACE');
      // A search over the workspace does not follow the links out.
      const found = await e.call('search', { query: 'root:x:0:0' });
      assert.doesNotMatch(found.text, /x:0:0:root:/, found.text);
      await e.run('rm -f rootlink pw p1root selfetc chained');
    });

    test('the root file system is read-only and /proc and /sys cannot be written', async () => {
      const r = await e.run(
        'for f in /usr/evil /etc/evil /evil /opt/venv/evil; do touch $f 2>&1 || echo "refused $f"; done; ' +
          'echo 1 > /proc/sys/kernel/core_pattern 2>&1; echo proc=$?; echo 1 > /sys/kernel/profiling 2>&1; echo sys=$?; ' +
          'echo c > /proc/sysrq-trigger 2>&1; echo sysrq=$?',
      );
      for (const f of ['/usr/evil', '/etc/evil', '/evil', '/opt/venv/evil']) assert.match(r.stdout, new RegExp(`refused ${f}`));
      assert.match(r.stdout, /Read-only file system/);
      for (const k of ['proc', 'sys', 'sysrq']) assert.match(r.stdout, new RegExp(`${k}=[1-9]`), `${k}: ${r.stdout}`);
    });

    test('/etc/hosts, /etc/hostname and /etc/resolv.conf are read-only', async () => {
      const r = await e.run(
        'for f in /etc/hosts /etc/hostname /etc/resolv.conf; do [ -e $f ] || continue; ' +
          'echo "# x" >> $f 2>/dev/null && echo "wrote $f"; done; true',
      );
      assert.doesNotMatch(r.stdout, /wrote/, r.stdout);
    });

    test('no network: no route out, DNS fails, only loopback, which works', async () => {
      const r =
        await e.run(`cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; echo ---; getent hosts pypi.org; echo dns=$?; python -c "
import socket
for host in ['1.1.1.1', '8.8.8.8', '203.0.113.1']:
    try:
        socket.create_connection((host, 443), timeout=3); print('CONNECTED', host)
    except OSError as e:
        print('unreachable', host, e.strerror)
srv = socket.socket(); srv.bind(('localhost', 0)); srv.listen(1)
c = socket.create_connection(('localhost', srv.getsockname()[1]), timeout=3); srv.accept()[0].sendall(b'pong'); print(c.recv(4).decode())
"`);
      assert.deepEqual(r.stdout.split('---')[0]!.trim().split('\n'), ['lo']);
      assert.match(r.stdout, /dns=[1-9]/);
      assert.doesNotMatch(r.stdout, /CONNECTED/);
      assert.equal(r.stdout.match(/^unreachable /gm)?.length, 3, r.stdout);
      assert.match(r.stdout, /^pong$/m);
    });

    test('a fork bomb hits the pids cap and ends at the timeout; the sandbox lives on', async () => {
      const t0 = Date.now();
      await e.run(':(){ :|:& };:', 5);
      assert.ok(Date.now() - t0 < bounds.forkBombMs, `returned after ${Date.now() - t0} ms`);
      const after = await e.run('echo alive; ps -e --no-headers | wc -l');
      const [alive, count] = after.stdout.trim().split('\n');
      assert.equal(alive, 'alive');
      assert.ok(Number(count) < 10, `${count} processes left in the sandbox`);
      await sameContainer();
    });

    test('allocating far more memory than the limit is killed, in the heap or in /dev/shm; the sandbox lives on', async () => {
      // bytearray asks for zeroed pages at once; bytes repetition writes every one of them.
      for (const alloc of ['bytearray(2 * 1024**3)', "b'a' * (2 * 1024**3)"]) {
        const r = await e.run(`python -c "x = ${alloc}; print(len(x))"`, 60);
        assert.notEqual(r.exitCode, 0, alloc);
        assert.doesNotMatch(r.stdout, /2147483648/, alloc);
      }
      // Memory in a tmpfs is the sandbox's memory too: /dev/shm is capped.
      const shm = await e.run('head -c 200000000 /dev/zero > /dev/shm/fill; echo shm=$?; rm -f /dev/shm/fill', 60);
      assert.match(shm.stdout, /shm=[1-9]/);
      assert.equal((await e.run('echo alive')).stdout, 'alive\n');
      await sameContainer();
    });

    test('output floods are capped and bounded in time, the server memory too', async () => {
      const yes = await e.run('yes', 3);
      assert.equal(yes.timedOut, true);
      assert.ok(yes.totalBytes.stdout > 1_000_000, `${yes.totalBytes.stdout} bytes`);
      assert.ok(yes.stdout.length < 1_000_000);
      const rss = process.memoryUsage().rss;
      const big = await e.run(`head -c ${bounds.floodBytes} /dev/zero`, 120);
      assert.equal(big.timedOut, false);
      assert.equal(big.totalBytes.stdout, bounds.floodBytes);
      assert.ok(process.memoryUsage().rss - rss < 300 * MiB, 'server memory stays bounded');
    });

    test('filling the workspace or /tmp stops at their size, not the host disk', async () => {
      const ws = await e.run('dd if=/dev/zero of=fill bs=1M count=500 2>&1; ls -l fill | cut -d" " -f5; rm -f fill', 60);
      assert.match(ws.stdout, /No space left on device/);
      const size = Number(ws.stdout.trim().split('\n').at(-1));
      assert.ok(size <= ATTACK_LIMITS.workspaceBytes, `wrote ${size} bytes`);
      const tmp = await e.run('dd if=/dev/zero of=/tmp/fill bs=1M count=500 2>&1; rm -f /tmp/fill', 60);
      assert.match(tmp.stdout, /No space left on device/);
    });

    test('a timeout kills the command and what it left behind; the sandbox lives on', async () => {
      const t0 = Date.now();
      const r = await e.run("echo before; trap '' TERM; (setsid sleep 777.5 &); sleep 1000", 2);
      assert.equal(r.timedOut, true);
      assert.match(r.stdout, /before/);
      assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
      const left = await e.run("ps -eo args | grep -c '^sleep 777.5' || true");
      assert.equal(left.stdout.trim(), '0');
      await sameContainer();
    });

    test('kill -9 1 cannot take the sandbox down', async () => {
      await e.run('kill -9 1; sleep 0.5; true');
      assert.equal((await e.run('echo alive')).stdout, 'alive\n', 'PID 1 of a PID namespace ignores SIGKILL from inside');
      await sameContainer();
    });
  });
}
