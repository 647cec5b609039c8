import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api } from '@kubernetes/client-node';
import { baseImageName } from '../../../src/env/images.ts';
import type { KubernetesSandbox, KubernetesSandboxFactory } from '../../../src/sandbox/kubernetes/index.ts';
import { kubernetesSkipReason, loadIntoCluster, testFactory } from './skip.ts';

const IMAGE = baseImageName('python', '3.11');
const MiB = 1024 ** 2;

describe('kubernetes sandbox: limits and hardening', async () => {
  const skip = await kubernetesSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  let factory: KubernetesSandboxFactory;
  let sb: KubernetesSandbox;
  before(async () => {
    factory = testFactory({
      limits: { memoryBytes: 256 * MiB, workspaceBytes: 64 * MiB, tmpBytes: 32 * MiB, activeDeadlineSeconds: 3600 },
    });
    await loadIntoCluster(IMAGE);
    sb = (await factory.create({ seed: {}, env: { image: IMAGE } })) as KubernetesSandbox;
  });
  after(async () => factory?.close());

  test('the pod spec: no token, no privilege escalation, read-only root, limits, deadline, labels', async () => {
    const pod = await factory.kc
      .makeApiClient(CoreV1Api)
      .readNamespacedPod({ name: sb.transport.ref.pod, namespace: sb.transport.ref.namespace });
    const c = pod.spec!.containers[0]!;
    assert.equal(pod.spec!.automountServiceAccountToken, false);
    assert.equal(pod.spec!.activeDeadlineSeconds, 3600);
    assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
    assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
    assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL']);
    assert.equal(c.resources?.limits?.memory, String(256 * MiB));
    assert.ok(c.resources?.limits?.cpu && c.resources.limits['ephemeral-storage']);
    assert.equal(pod.metadata?.labels?.['benchgym.server'], factory.serverId);
    assert.equal(pod.metadata?.labels?.['benchgym.pid'], String(process.pid));
    assert.ok(pod.metadata?.labels?.['benchgym.host']);
  });

  test('memory past the limit kills the command, not the episode', async () => {
    const r = await sb.exec('python -c "b = bytearray(1024 * 1024 * 1024); print(len(b))"', { timeoutMs: 60_000 });
    assert.notEqual(r.exitCode, 0);
    assert.doesNotMatch(r.stdout, /1073741824/);
    assert.equal((await sb.exec('echo alive')).stdout, 'alive\n');
  });

  test('the workspace and /tmp are size-limited', async () => {
    const r = await sb.exec(
      'head -c 200000000 /dev/zero > big; echo ws=$?; head -c 100000000 /dev/zero > /tmp/big; echo tmp=$?; rm -f big /tmp/big',
      { timeoutMs: 60_000 },
    );
    assert.match(r.stdout, /ws=1/);
    assert.match(r.stdout, /tmp=1/);
    assert.match(r.stderr, /No space left/);
  });

  test('a process bomb hits the pids cap and the episode goes on', async () => {
    const r = await sb.exec('for i in $(seq 1 2000); do sleep 60 & done 2>/dev/null; echo spawned; ps -e --no-headers | wc -l', {
      timeoutMs: 60_000,
    });
    const n = Number(r.stdout.trim().split('\n').at(-1));
    assert.ok(n < 1000, `${n} processes`);
    // The command's leftovers are killed after it.
    const after = await sb.exec("ps -eo args | grep -c '^sleep 60' || true");
    assert.equal(after.stdout.trim(), '0');
  });
});
