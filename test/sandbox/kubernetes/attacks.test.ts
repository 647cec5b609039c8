import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import type { Gym } from '../../../src/episode/gym.ts';
import { GymError } from '../../../src/errors.ts';
import type { KubernetesSandbox, KubernetesSandboxFactory } from '../../../src/sandbox/kubernetes/index.ts';
import { fileSizeLimitScript } from '../../../src/sandbox/kubernetes/limits.ts';
import { makeGym, startExample, testContext } from '../../helpers.ts';
import { kubernetesSkipReason, testFactory } from './skip.ts';

const MiB = 1024 ** 2;

/**
 * The Docker backend's attack cases (test/sandbox/docker/attacks.test.ts) on the kubernetes
 * backend, through a gym's tools: escapes, bombs, floods, timeouts, no network. Each is
 * bounded in time; the pod and the episode survive, or the episode ends as SANDBOX_UNAVAILABLE
 * with no verdict — never a wrong one.
 */
describe('kubernetes sandbox under attack', async () => {
  const skip = await kubernetesSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let factory: KubernetesSandboxFactory;
  let id: string;
  // No onOutput: a flood must not be collected by the test itself.
  const quiet = () => ({ ...testContext(), onOutput: undefined });
  const run = async (command: string, timeout_s = 30) =>
    (await gym.callTool('run_command', { command, timeout_s }, quiet(), id)).data as Record<string, any>;
  const pod = () => (gym.episode(id).sandbox as KubernetesSandbox).transport.ref.pod;
  const core = () => factory.kc.makeApiClient(CoreV1Api);
  const restarts = async () =>
    (await core().readNamespacedPod({ name: pod(), namespace: factory.namespace })).status?.containerStatuses?.[0]?.restartCount;
  const toolErr = async (p: Promise<unknown>): Promise<GymError> => {
    try {
      await p;
    } catch (err) {
      assert.ok(err instanceof GymError, `a GymError, got ${err}`);
      return err;
    }
    assert.fail('the call should have failed');
  };

  before(async () => {
    factory = testFactory({
      limits: { memoryBytes: 256 * MiB, workspaceBytes: 64 * MiB, tmpBytes: 32 * MiB, ephemeralBytes: 64 * MiB, maxFileBytes: 64 * MiB },
    });
    ({ gym, cleanup } = await makeGym({ sandboxes: factory }));
    // Not roman-numerals as on Docker: the registry test pulls that image under another name, and
    // the kubelet's pulled-image records then refuse it to pods with imagePullPolicy Never.
    id = await startExample(gym, 'parse-duration');
  });
  after(async () => cleanup?.());

  test('escapes: .., absolute paths, symlinks and /proc links out of the workspace are refused by every file tool', async () => {
    await run(
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
      assert.equal((await toolErr(gym.callTool('view_file', { path: p }, quiet(), id))).code, 'PATH_OUTSIDE_WORKSPACE', `view_file ${p}`);
      assert.equal(
        (await toolErr(gym.callTool('create_file', { path: p, content: 'x', overwrite: true }, quiet(), id))).code,
        'PATH_OUTSIDE_WORKSPACE',
        `create_file ${p}`,
      );
    }
    for (const p of ['rootlink', 'p1root', 'selfetc']) {
      assert.equal((await toolErr(gym.callTool('list_dir', { path: p }, quiet(), id))).code, 'PATH_OUTSIDE_WORKSPACE', `list_dir ${p}`);
    }
    // A search over the workspace does not follow the links out.
    const found = await gym.callTool('search', { query: 'root:x:0:0' }, quiet(), id);
    assert.doesNotMatch(found.text, /x:0:0:root:/, found.text);
    await run('rm -f rootlink pw p1root selfetc chained');
  });

  test('the root file system is read-only and /proc and /sys cannot be written', async () => {
    const r = await run(
      'for f in /usr/evil /etc/evil /evil /opt/venv/evil; do touch $f 2>&1 || echo "refused $f"; done; ' +
        'echo 1 > /proc/sys/kernel/core_pattern 2>&1; echo proc=$?; ' +
        'echo 1 > /sys/kernel/profiling 2>&1; echo sys=$?; echo c > /proc/sysrq-trigger 2>&1; echo sysrq=$?',
    );
    for (const f of ['/usr/evil', '/etc/evil', '/evil', '/opt/venv/evil']) assert.match(r.stdout, new RegExp(`refused ${f}`));
    assert.match(r.stdout, /Read-only file system/);
    for (const k of ['proc', 'sys', 'sysrq']) assert.match(r.stdout, new RegExp(`${k}=[1-9]`), `${k}: ${r.stdout}`);
  });

  test('no service-account token, no capabilities, and the API server is out of reach', async () => {
    const r = await run(
      [
        'ls /var/run/secrets /run/secrets 2>&1',
        'echo tokens:; grep -rls "eyJhbGciOi" /etc /run /var/run /opt /tmp /workspace 2>/dev/null | head -3; echo tokens-done',
        'grep CapEff /proc/self/status',
        // The env still names the cluster's service; nothing answers there, nor on the host's loopback ports.
        `python -c "
import os, socket
for host, port in [(os.environ.get('KUBERNETES_SERVICE_HOST', '10.96.0.1'), 443), ('127.0.0.1', 16443), ('127.0.0.1', 10250), ` +
          `('127.0.0.1', 12379)]:
    try:
        socket.create_connection((host, port), timeout=3); print('CONNECTED', host, port)
    except OSError as e:
        print('refused', host, port, type(e).__name__)
"`,
      ].join('; '),
    );
    assert.match(r.stdout, /\/var\/run\/secrets'?: No such file/);
    assert.match(r.stdout, /cannot access '?\/run\/secrets'?: No such file/);
    assert.match(r.stdout, /^tokens:\ntokens-done$/m, 'no file holds a token');
    assert.match(r.stdout, /CapEff:\s+0000000000000000/);
    assert.doesNotMatch(r.stdout, /CONNECTED/);
    assert.equal(r.stdout.match(/^refused /gm)?.length, 4, r.stdout);
  });

  test('no network: no route out, DNS fails, only loopback, which works', async () => {
    const r = await run(`cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; echo ---; getent hosts pypi.org; echo dns=$?; python -c "
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

  test('a fork bomb hits the pids cap and ends at the timeout; the pod lives on', async () => {
    const t0 = Date.now();
    await run(':(){ :|:& };:', 5);
    assert.ok(Date.now() - t0 < 30_000, `returned after ${Date.now() - t0} ms`);
    const after = await run('echo alive; ps -e --no-headers | wc -l');
    const [alive, count] = after.stdout.trim().split('\n');
    assert.equal(alive, 'alive');
    assert.ok(Number(count) < 10, `${count} processes left in the sandbox`);
    assert.equal(await restarts(), 0);
  });

  test('allocating far more memory than the limit is killed, the pod lives on', async () => {
    const r = await run('python -c "x = b\'a\' * (2 * 1024**3); print(len(x))"', 60);
    assert.notEqual(r.exitCode, 0);
    assert.doesNotMatch(r.stdout, /2147483648/);
    // Memory in a tmpfs is the pod's memory too: /dev/shm is capped.
    const shm = await run('head -c 200000000 /dev/zero > /dev/shm/fill; echo shm=$?; rm -f /dev/shm/fill', 60);
    assert.match(shm.stdout, /shm=[1-9]/);
    assert.equal((await run('echo alive')).stdout, 'alive\n');
    assert.equal(await restarts(), 0);
  });

  test('output floods are capped and bounded in time, the server memory too', async () => {
    const yes = await run('yes', 3);
    assert.equal(yes.timedOut, true);
    assert.ok(yes.totalBytes.stdout > 1_000_000, `${yes.totalBytes.stdout} bytes`);
    assert.ok(yes.stdout.length < 1_000_000);
    const rss = process.memoryUsage().rss;
    const big = await run('head -c 500M /dev/zero', 120);
    assert.equal(big.timedOut, false);
    assert.equal(big.totalBytes.stdout, 500 * MiB);
    assert.ok(process.memoryUsage().rss - rss < 300 * MiB, 'server memory stays bounded');
  });

  test('filling the workspace, /tmp or the writable files of the root stops at their size, not the node disk', async () => {
    const ws = await run('dd if=/dev/zero of=fill bs=1M count=500 2>&1; ls -l fill | cut -d" " -f5; rm -f fill', 60);
    assert.match(ws.stdout, /No space left on device/);
    const size = Number(ws.stdout.trim().split('\n').at(-1));
    assert.ok(size <= 64 * MiB, `wrote ${size} bytes`);
    const tmp = await run('dd if=/dev/zero of=/tmp/fill bs=1M count=500 2>&1; rm -f /tmp/fill', 60);
    assert.match(tmp.stdout, /No space left on device/);
  });

  test('a timeout kills the command in the pod; the pod lives on', async () => {
    const before = pod();
    const t0 = Date.now();
    const r = await run("echo before; trap '' TERM; (setsid sleep 777.5 &); sleep 1000", 2);
    assert.equal(r.timedOut, true);
    assert.match(r.stdout, /before/);
    assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
    const left = await run("ps -eo args | grep -c '^sleep 777.5' || true");
    assert.equal(left.stdout.trim(), '0');
    assert.equal(pod(), before);
    assert.equal(await restarts(), 0);
  });

  test('/etc/hosts, /etc/hostname and /etc/resolv.conf are read-only, as on Docker', async () => {
    const r = await run(
      'for f in /etc/hosts /etc/hostname /etc/resolv.conf; do [ -e $f ] || continue; ' +
        'echo "# x" >> $f 2>/dev/null && echo "wrote $f"; done; true',
    );
    assert.doesNotMatch(r.stdout, /wrote/, r.stdout);
  });

  test(
    '/dev/termination-log (a node-disk file the kubelet mounts writable) cannot grow past the pod ephemeral-storage limit',
    { timeout: 60_000 },
    async () => {
      const r = await run(
        'head -c 200M /dev/zero > /dev/termination-log 2>&1; stat -c %s /dev/termination-log; ' +
          '(ulimit -f unlimited 2>/dev/null) && echo raised; true',
        30,
      );
      const written = Number(/^(\d+)$/m.exec(r.stdout)?.[1]);
      assert.doesNotMatch(r.stdout, /raised/, 'a command cannot lift the file-size cap');
      // Either the write stopped at the limit, or the kubelet evicts the pod (the episode then ends as SANDBOX_UNAVAILABLE, never scored).
      if (written > 64 * MiB) {
        let err: GymError | undefined;
        for (let i = 0; i < 15 && !err; i++) {
          await new Promise((res) => setTimeout(res, 1000));
          err = await gym.callTool('run_command', { command: 'true', timeout_s: 10 }, quiet(), id).then(
            () => undefined,
            (e: unknown) => e as GymError,
          );
        }
        assert.ok(err, `${written} bytes on the node disk, the pod still runs`);
        assert.equal(err.code, 'SANDBOX_UNAVAILABLE', err.message);
        assert.equal(gym.episode(id).verdict, undefined);
      }
    },
  );

  test('kill -9 1 cannot take the pod down; deleting the pod gives SANDBOX_UNAVAILABLE, never a wrong answer', async () => {
    await run('kill -9 1; sleep 0.5; true');
    assert.equal((await run('echo alive')).stdout, 'alive\n', 'PID 1 of a PID namespace ignores SIGKILL from inside');
    const episode = gym.episode(id);
    await core().deleteNamespacedPod({ name: pod(), namespace: factory.namespace, gracePeriodSeconds: 0 });
    // An exec into a pod being deleted may still run: wait until the API no longer has it.
    for (
      let i = 0;
      i < 300 &&
      (await core()
        .readNamespacedPod({ name: pod(), namespace: factory.namespace })
        .then(
          () => true,
          () => false,
        ));
      i++
    )
      await new Promise((r) => setTimeout(r, 200));
    const err = await toolErr(gym.callTool('run_command', { command: 'true' }, quiet(), id));
    assert.equal(err.code, 'SANDBOX_UNAVAILABLE', err.message);
    assert.equal(episode.state, 'ended');
    assert.equal(episode.verdict, undefined);
    for (const tool of ['view_file', 'submit']) {
      const e = await toolErr(gym.callTool(tool, tool === 'view_file' ? { path: 'duration.py' } : {}, quiet(), id));
      assert.equal(e.code, 'EPISODE_ENDED', `${tool}: ${e.message}`);
    }
    await episode.trajectory.flush();
    const records = (await fs.readFile(episode.trajectory.file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.ok(records.some((r) => r.type === 'end' && r.infraError?.code === 'SANDBOX_UNAVAILABLE'));
  });
});

test('fileSizeLimitScript caps the files a shell and its children write (no cluster needed)', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-fsize-'));
  try {
    const script = `${fileSizeLimitScript(64 * 1024)}; head -c 200000 /dev/zero > ${dir}/big; echo rc=$?`;
    // Whether it can be raised again depends on CAP_SYS_RESOURCE, which a pod
    // has not and the test user may have: the cluster test above checks that.
    const { stdout } = await promisify(execFile)('sh', ['-c', script]);
    assert.match(stdout, /rc=[1-9]/);
    assert.equal((await fs.stat(path.join(dir, 'big'))).size, 64 * 1024);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
