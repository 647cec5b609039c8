import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { baseImageName } from '../../../src/env/images.ts';
import { podManifest } from '../../../src/sandbox/kubernetes/pod.ts';
import { POD_OWNER_LABELS, reapStalePods } from '../../../src/sandbox/kubernetes/reaper.ts';
import { DEFAULT_KUBERNETES_LIMITS } from '../../../src/sandbox/kubernetes/limits.ts';
import { kubernetesSkipReason, loadIntoCluster, testFactory } from './skip.ts';

describe('kubernetes reaper: pods of dead servers of this host go, others stay', async () => {
  const skip = await kubernetesSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  const factory = testFactory();
  after(() => factory.close());

  test("on init, a dead process's pod is deleted; another host's and a live process's are kept", async () => {
    const image = baseImageName('python', '3.11');
    await loadIntoCluster(image);
    await factory.init();
    const core = factory.kc.makeApiClient(CoreV1Api);
    const ns = factory.namespace;
    // A pid that has just exited: its owner is dead.
    const dead = String(spawnSync('sh', ['-c', 'echo $$']).stdout).trim();
    const base = { 'benchgym.server': factory.serverId, 'benchgym.instance': 'old' };
    const mk = (labels: Record<string, string>) => {
      const name = `benchgym-reap-${randomBytes(4).toString('hex')}`;
      return core
        .createNamespacedPod({
          namespace: ns,
          body: podManifest({
            name,
            image,
            labels,
            limits: DEFAULT_KUBERNETES_LIMITS,
            memoryBytes: 256 * 1024 ** 2,
            pullPolicy: 'Never',
            user: { uid: 65534, gid: 65534 },
          }),
        })
        .then(() => name);
    };
    const deadPod = await mk({ ...base, ...POD_OWNER_LABELS, 'benchgym.pid': dead, 'benchgym.started': '1' });
    const otherHost = await mk({ ...base, ...POD_OWNER_LABELS, 'benchgym.host': 'some-other-host' });
    const live = await mk({ ...base, ...POD_OWNER_LABELS });
    const otherServer = await mk({ ...base, ...POD_OWNER_LABELS, 'benchgym.server': `${factory.serverId}-other`, 'benchgym.pid': dead });
    try {
      assert.equal(await reapStalePods(core, ns, factory.serverId, factory.instanceId), 1);
      const names = async () =>
        (await core.listNamespacedPod({ namespace: ns })).items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata!.name!);
      const left = await names();
      assert.ok(!left.includes(deadPod), "the dead process's pod is gone");
      for (const kept of [otherHost, live, otherServer]) assert.ok(left.includes(kept), `${kept} is kept`);
    } finally {
      await Promise.all(
        [deadPod, otherHost, live, otherServer].map((name) =>
          core.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 }).catch(() => {}),
        ),
      );
    }
  });
});
