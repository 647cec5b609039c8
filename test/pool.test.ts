import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workerPool } from '../src/pool.ts';

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

test('workerPool takes items in input order, at most `concurrency` at a time', async () => {
  const taken: number[] = [];
  let inFlight = 0;
  let most = 0;
  await workerPool([10, 11, 12, 13, 14, 15, 16], 3, async (item, i) => {
    assert.equal(item, 10 + i);
    taken.push(i);
    most = Math.max(most, ++inFlight);
    await tick(i % 2 ? 1 : 8);
    inFlight--;
  });
  assert.deepEqual(taken, [0, 1, 2, 3, 4, 5, 6]);
  assert.equal(most, 3);
});

test('workerPool: no items, and more workers than items', async () => {
  await workerPool([], 4, async () => assert.fail('no work'));
  const done: string[] = [];
  await workerPool(['a'], 8, async (x) => void done.push(x));
  assert.deepEqual(done, ['a']);
  await workerPool(['b'], 0, async (x) => void done.push(x));
  assert.deepEqual(done, ['a', 'b'], 'a concurrency below one still runs one worker');
});

test('workerPool: the first error stops new work and is thrown once the items in flight end', async () => {
  const started: number[] = [];
  const finished: number[] = [];
  await assert.rejects(
    workerPool([0, 1, 2, 3, 4, 5], 2, async (i) => {
      started.push(i);
      if (i === 1) throw new Error('item 1 broke');
      if (i === 2) throw new Error('item 2 broke too');
      await tick(20);
      finished.push(i);
    }),
    /item 1 broke/,
  );
  assert.deepEqual(started, [0, 1], 'nothing is taken after the first error');
  assert.deepEqual(finished, [0], 'the item in flight ran to its end');
});

test('workerPool: an abort stops the taking, without an error', async () => {
  const stop = new AbortController();
  const started: number[] = [];
  await workerPool(
    [0, 1, 2, 3, 4],
    2,
    async (i) => {
      started.push(i);
      if (i === 2) stop.abort();
      await tick();
    },
    { signal: stop.signal },
  );
  assert.deepEqual(started, [0, 1, 2]);
  const none: number[] = [];
  await workerPool([0, 1], 2, async (i) => void none.push(i), { signal: stop.signal });
  assert.deepEqual(none, [], 'an aborted signal takes nothing');
});
