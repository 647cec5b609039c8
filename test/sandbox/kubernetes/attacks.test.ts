import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { GymError } from '../../../src/errors.ts';
import type { KubernetesSandbox, KubernetesSandboxFactory } from '../../../src/sandbox/kubernetes/index.ts';
import { fileSizeLimitScript } from '../../../src/sandbox/kubernetes/limits.ts';
import { ATTACK_LIMITS, AttackEpisode, checkEndedAsInfraFailure } from '../attacks.cases.ts';
import { describeKubernetes, testFactory } from './skip.ts';

const MiB = 1024 ** 2;

/**
 * What only the kubernetes backend has under attack: the service account and the API server, the kubelet's
 * writable termination log, a pod deleted through the API. The attacks every container backend meets
 * (escapes, bombs, floods, timeouts, no network) are in ../attacks.cases.ts. The episode survives, or ends
 * as SANDBOX_UNAVAILABLE with no verdict — never a wrong one.
 */
describeKubernetes('kubernetes sandbox under attack', async () => {
  let factory: KubernetesSandboxFactory;
  const e = new AttackEpisode(
    () => (factory = testFactory({ limits: { ...ATTACK_LIMITS, ephemeralBytes: 64 * MiB, maxFileBytes: 64 * MiB } })),
    // Not roman-numerals as on Docker: the registry test pulls that image under another name, and
    // the kubelet's pulled-image records then refuse it to pods with imagePullPolicy Never.
    'parse-duration',
  );
  const pod = () => (e.episode.sandbox as KubernetesSandbox).transport.ref.pod;
  const core = () => factory.kc.makeApiClient(CoreV1Api);

  test('no service-account token, no capabilities, and the API server is out of reach', async () => {
    const r = await e.run(
      [
        'ls /var/run/secrets /run/secrets 2>&1',
        'echo tokens:; grep -rls "eyJhbGciOi" /etc /run /var/run /opt /tmp /workspace 2>/dev/null | head -3; echo tokens-done',
        'grep CapEff /proc/self/status',
        // The env still names the cluster's service; nothing answers there, nor on the host's loopback ports.
        `python -c "
import os, socket
for host, port in [(os.environ.get('KUBERNETES_SERVICE_HOST', '10.96.0.1'), 443),
                   ('127.0.0.1', 16443), ('127.0.0.1', 10250), ('127.0.0.1', 12379)]:
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

  test(
    '/dev/termination-log (a node-disk file the kubelet mounts writable) cannot grow past the pod ephemeral-storage limit',
    { timeout: 60_000 },
    async () => {
      const r = await e.run(
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
          err = await e.call('run_command', { command: 'true', timeout_s: 10 }).then(
            () => undefined,
            (e: unknown) => e as GymError,
          );
        }
        assert.ok(err, `${written} bytes on the node disk, the pod still runs`);
        assert.equal(err.code, 'SANDBOX_UNAVAILABLE', err.message);
        assert.equal(e.episode.verdict, undefined);
      }
    },
  );

  test('deleting the pod gives SANDBOX_UNAVAILABLE, never a wrong answer', async () => {
    await core().deleteNamespacedPod({ name: pod(), namespace: factory.namespace, gracePeriodSeconds: 0 });
    // An exec into a pod being deleted may still run: wait until the API no longer has it.
    const exists = () =>
      core()
        .readNamespacedPod({ name: pod(), namespace: factory.namespace })
        .then(
          () => true,
          () => false,
        );
    for (let i = 0; i < 300 && (await exists()); i++) await new Promise((r) => setTimeout(r, 200));
    await checkEndedAsInfraFailure(e, 'duration.py');
  });
});

test('fileSizeLimitScript caps the files a shell and its children write (no cluster needed)', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-fsize-'));
  try {
    const script = `${fileSizeLimitScript(64 * 1024)}; head -c 200000 /dev/zero > ${dir}/big; echo rc=$?`;
    // Whether it can be raised again depends on CAP_SYS_RESOURCE, which a pod has not and the test user may have:
    // the cluster test above checks that.
    const { stdout } = await promisify(execFile)('sh', ['-c', script]);
    assert.match(stdout, /rc=[1-9]/);
    assert.equal((await fs.stat(path.join(dir, 'big'))).size, 64 * 1024);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
