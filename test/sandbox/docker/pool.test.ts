import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import { GymError } from '../../../src/errors.ts';
import { sandboxEnv } from '../../../src/env/types.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { seedOf } from '../../../src/tasks/seed.ts';
import { dockerSkipReason } from './skip.ts';
import { BUILTIN_SUITES } from '../../../bin/builtins.ts';
import { WarmPool, type Pooled } from '../../../src/sandbox/container/pool.ts';
import type { ExecutorClient } from '../../../src/sandbox/executor/client.ts';

async function exampleTask(id: string) {
  const registry = new SuiteRegistry(BUILTIN_SUITES);
  registry.enable('examples');
  return registry.task('examples', id);
}

test('the warm pool hands out started containers and refills; the container budget queues then says CAPACITY', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const task = await exampleTask('roman-numerals');
  const pooled = new DockerSandboxFactory({ serverId: `test-pool-${randomBytes(4).toString('hex')}`, poolSize: 2 });
  try {
    const env = await pooled.prepare(task);
    await pooled.warm(env.image!);
    assert.equal(pooled.stats().pooled, 2);
    const a = await pooled.create({ seed: seedOf(task), env: sandboxEnv(env) });
    assert.equal(pooled.stats().pooled, 1, 'the episode took a ready container');
    assert.match((await a.exec('ls')).stdout, /roman\.py/, 'pooled containers hold the start state');
    await pooled.warm(env.image!);
    assert.equal(pooled.stats().pooled, 2, 'refilled in the background');
    await a.destroy();
  } finally {
    await pooled.close();
  }
  assert.equal(pooled.stats().pooled, 0);

  const small = new DockerSandboxFactory({
    serverId: `test-cap-${randomBytes(4).toString('hex')}`,
    poolSize: 0,
    maxContainers: 2,
    capacityWaitMs: 3000,
  });
  try {
    const env = await small.prepare(task);
    const one = await small.create({ seed: seedOf(task), env: sandboxEnv(env) });
    const two = await small.create({ seed: seedOf(task), env: sandboxEnv(env) });
    await assert.rejects(
      small.create({ seed: seedOf(task), env: sandboxEnv(env) }),
      (e: unknown) => e instanceof GymError && e.code === 'CAPACITY',
    );
    // A waiting request gets the slot a finished sandbox frees.
    const waiting = small.create({ seed: seedOf(task), env: sandboxEnv(env) });
    await one.destroy();
    const three = await waiting;
    await Promise.all([two.destroy(), three.destroy()]);
  } finally {
    await small.close();
  }
});

test(
  'a task that needs more memory or pids gets a container of its own with that much; ' + 'the others the default, from the pool',
  async (t) => {
    const skip = await dockerSkipReason();
    if (skip) return t.skip(skip);
    const plain = await exampleTask('roman-numerals');
    const big = { ...plain, resources: { memoryMb: 3072 } };
    const factory = new DockerSandboxFactory({ serverId: `test-mem-${randomBytes(4).toString('hex')}`, poolSize: 1 });
    try {
      const bigEnv = await factory.prepare(big);
      assert.equal(bigEnv.memoryBytes, 3072 * 1024 ** 2);
      const plainEnv = await factory.prepare(plain);
      const first = await factory.create({ seed: seedOf(big), env: sandboxEnv(bigEnv) });
      assert.deepEqual(
        [factory.stats().pooled, factory.stats().refilling],
        [0, 0],
        'no container is started for a pool this task could never take from',
      );
      await first.destroy();
      await factory.warm(plainEnv.image!);
      const a = (await factory.create({
        seed: seedOf(big),
        env: sandboxEnv(bigEnv),
      })) as import('../../../src/sandbox/docker/index.ts').DockerSandbox;
      assert.equal((await a.transport.container.inspect()).HostConfig.Memory, 3072 * 1024 ** 2);
      assert.equal(factory.stats().pooled, 1, 'the pooled container (default memory) was not handed out');
      const b = (await factory.create({
        seed: seedOf(plain),
        env: sandboxEnv(plainEnv),
      })) as import('../../../src/sandbox/docker/index.ts').DockerSandbox;
      assert.equal((await b.transport.container.inspect()).HostConfig.Memory, factory.limits.memoryBytes);
      assert.equal((await b.transport.container.inspect()).HostConfig.PidsLimit, factory.limits.pids);
      // More pids (dubbo's Jetty tests): a container of its own too, the pooled one left.
      await factory.warm(plainEnv.image!);
      const threadsEnv = await factory.prepare({ ...plain, resources: { pids: 3000 } });
      assert.equal(threadsEnv.pids, 3000);
      const c = (await factory.create({
        seed: seedOf(plain),
        env: sandboxEnv(threadsEnv),
      })) as import('../../../src/sandbox/docker/index.ts').DockerSandbox;
      assert.equal((await c.transport.container.inspect()).HostConfig.PidsLimit, 3000);
      assert.equal((await c.transport.container.inspect()).HostConfig.Memory, factory.limits.memoryBytes);
      assert.equal(factory.stats().pooled, 1, 'the pooled container (default pids) was not handed out');
      await a.destroy();
      await b.destroy();
      await c.destroy();
    } finally {
      await factory.close();
    }
  },
);

test('a pooled container unused for idleMs is removed; a fresh one, or one a refill is adding, stays', async () => {
  const removed: string[] = [];
  let n = 0;
  const pool = new WarmPool<Pooled & { name: string }>(
    2,
    async (image) => ({ name: `${image}-${++n}`, executor: {} as ExecutorClient }),
    async (c) => void removed.push(c.name),
    60_000,
  );
  try {
    await pool.warm('a');
    assert.equal(pool.size, 2);
    assert.equal(await pool.sweep(Date.now() + 59_000), 0, 'younger than idleMs: kept');
    assert.equal(await pool.sweep(Date.now() + 61_000), 2);
    assert.deepEqual(removed.sort(), ['a-1', 'a-2']);
    assert.equal(pool.size, 0);
    assert.equal(pool.take('a'), undefined, 'nothing stale is handed out');
    // A refill still running when the sweep comes keeps adding to the same list.
    const adding = pool.refill('b');
    await pool.sweep(Date.now() + 61_000);
    await adding;
    assert.equal(pool.size, 2, 'the refill that was under way filled the pool');
    assert.ok(pool.take('b'));
  } finally {
    await pool.close();
  }
  assert.equal(pool.size, 0);
});
