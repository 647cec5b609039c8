import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api } from '@kubernetes/client-node';
import { baseImageName } from '../../../src/env/images.ts';
import { loadKubeConfig } from '../../../src/sandbox/kubernetes/client.ts';
import type { KubernetesSandbox } from '../../../src/sandbox/kubernetes/index.ts';
import { kubernetesSkipReason, loadIntoCluster, testFactory, testKubeconfig } from './skip.ts';

const IMAGE = baseImageName('python', '3.11');
const NAMESPACE = 'benchgym-test';
const core = () => loadKubeConfig(testKubeconfig()).makeApiClient(CoreV1Api);

/** Live pods (not being deleted) matching a label selector. */
async function podsOf(selector: string): Promise<{ name: string; labels: Record<string, string> }[]> {
  const list = await core().listNamespacedPod({ namespace: NAMESPACE, labelSelector: selector });
  return list.items
    .filter((p) => !p.metadata?.deletionTimestamp)
    .map((p) => ({ name: p.metadata!.name!, labels: p.metadata!.labels ?? {} }));
}

async function until(what: string, ms: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The kubernetes backend's warm pool: ready pods per image, taken by create, refilled, counted, reaped. */
describe('kubernetes sandbox: the warm pool of pods', async () => {
  const skip = await kubernetesSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  const create = { seed: {}, env: { image: IMAGE, vars: {} } };

  test(
    'create takes a ready pod (executor up, workspace laid out) far faster than a cold start, and the pool refills',
    { timeout: 180_000 },
    async () => {
      await loadIntoCluster(IMAGE);
      const f = testFactory({ poolSize: 1 });
      try {
        let t = Date.now();
        const cold = (await f.create({
          ...create,
          env: { ...create.env, memoryBytes: f.limits.memoryBytes + 1024 ** 2 },
        })) as KubernetesSandbox;
        const coldMs = Date.now() - t;
        await cold.destroy();
        await f.warm(IMAGE);
        assert.equal(f.stats().pooled, 1);
        const [pooled] = await podsOf(`benchgym.server=${f.labels['benchgym.server']},benchgym.pool=true`);
        assert.ok(pooled, 'the pool pod is labelled benchgym.pool=true');
        t = Date.now();
        const sb = (await f.create(create)) as KubernetesSandbox;
        const warmMs = Date.now() - t;
        assert.equal(sb.transport.ref.pod, pooled.name, 'the episode got the pool pod');
        assert.ok(sb.executor?.info && !sb.executor.closedReason, 'its executor is already connected');
        assert.ok(warmMs < coldMs / 3 && warmMs < 1000, `from the pool ${warmMs} ms, cold ${coldMs} ms`);
        assert.equal((await sb.exec('echo ready')).stdout, 'ready\n');
        await until('the pool refilled in the background', 120_000, () => f.stats().pooled === 1);
        assert.equal(f.stats().live, 1);
        await sb.destroy();
      } finally {
        await f.close();
      }
      assert.equal(f.stats().pooled, 0);
      assert.deepEqual(await podsOf(`benchgym.instance=${f.instanceId}`), [], 'close removes the pool pods too');
    },
  );

  test(
    'a task whose memory differs from the pool gets a pod of its own; the pool counts in the pod budget',
    { timeout: 180_000 },
    async () => {
      await loadIntoCluster(IMAGE);
      const f = testFactory({ poolSize: 1, maxPods: 2, capacityWaitMs: 2000 });
      try {
        await f.warm(IMAGE);
        const [pooled] = await podsOf(`benchgym.instance=${f.instanceId},benchgym.pool=true`);
        const memory = f.limits.memoryBytes * 2;
        const big = (await f.create({ ...create, env: { ...create.env, memoryBytes: memory } })) as KubernetesSandbox;
        assert.notEqual(big.transport.ref.pod, pooled!.name);
        const spec = await core().readNamespacedPod({ name: big.transport.ref.pod, namespace: NAMESPACE });
        assert.equal(spec.spec!.containers[0]!.resources!.limits!.memory, String(memory));
        assert.equal(f.stats().pooled, 1, 'the pooled pod (default memory) was not handed out');
        // Budget 2: one episode and one pooled pod. Another own-memory pod evicts the pooled one rather than wait.
        const big2 = (await f.create({ ...create, env: { ...create.env, memoryBytes: memory } })) as KubernetesSandbox;
        assert.equal(f.stats().pooled, 0, 'the pooled pod made room');
        await until(
          'the evicted pool pod is deleted',
          30_000,
          async () => !(await podsOf(`benchgym.instance=${f.instanceId},benchgym.pool=true`)).some((p) => p.name === pooled!.name),
        );
        await assert.rejects(
          f.create({ ...create, env: { ...create.env, memoryBytes: memory } }),
          (e: unknown) => (e as { code?: string }).code === 'CAPACITY',
        );
        await big.destroy();
        await big2.destroy();
      } finally {
        await f.close();
      }
    },
  );
});
