import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededOrder, TaskCursor } from '../../../src/server/openenv/task_order.ts';

const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

test('a seed orders the tasks the same way every time, a permutation of them all', () => {
  const order = seededOrder(IDS, 42);
  assert.deepEqual(seededOrder(IDS, 42), order);
  assert.deepEqual(seededOrder([...IDS].reverse(), 42), order, 'the order does not depend on how the suite lists its tasks');
  assert.deepEqual([...order].sort(), IDS);
  const others = [0, 1, 2, 3, 4, 5].map((s) => seededOrder(IDS, s).join());
  assert.ok(new Set(others).size >= 5, `seeds give different orders: ${others.join(' | ')}`);
});

test('a task added to the suite leaves the relative order of the others as it was', () => {
  const before = seededOrder(IDS, 7);
  const after = seededOrder([...IDS, 'new-task'], 7);
  assert.deepEqual(
    after.filter((id) => id !== 'new-task'),
    before,
  );
});

test('a cursor walks the order from its start and starts again past the end', () => {
  const cursor = TaskCursor.start('suite', IDS, 3);
  const order = seededOrder(IDS, 3);
  const walked = Array.from({ length: IDS.length + 2 }, () => cursor.next());
  assert.deepEqual(
    walked.map((w) => w.taskId),
    [...order, order[0], order[1]],
  );
  assert.deepEqual(
    walked.map((w) => w.index),
    [...Array(IDS.length + 2).keys()],
  );
  assert.equal(cursor.seed, 3);
  const drawn = TaskCursor.start('suite', IDS);
  assert.ok(Number.isInteger(drawn.seed) && drawn.seed >= 0, 'without a seed one is drawn, and said');
});
