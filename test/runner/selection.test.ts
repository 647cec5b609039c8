import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleTasks } from '../../src/runner/selection.ts';
import { pythonTask } from '../helpers.ts';

const tasks = (n: number) =>
  Array.from({ length: n }, (_, i) => pythonTask({ id: `t${String(i).padStart(3, '0')}`, files: { 'a.py': '' } }));
const ids = (list: { id: string }[]) => list.map((t) => t.id);

test("--limit N: the first N tasks in the suite's order; none: all of them", () => {
  const all = tasks(10);
  assert.deepEqual(ids(sampleTasks(all, { limit: 3 })), ['t000', 't001', 't002']);
  assert.deepEqual(ids(sampleTasks(all)), ids(all));
  assert.equal(sampleTasks(all, { limit: 50 }).length, 10);
  assert.throws(() => sampleTasks(all, { limit: 0 }), /limit must be a whole number >= 1/);
});

test('--shuffle SEED: the same seed, the same order (pinned); another seed, another order', () => {
  const all = tasks(50);
  const a = ids(sampleTasks(all, { shuffle: '1' }));
  assert.deepEqual(ids(sampleTasks(all, { shuffle: '1' })), a, 'reproducible');
  assert.deepEqual(ids(sampleTasks([...all].reverse(), { shuffle: '1' })), a, 'whatever order the suite lists them in');
  assert.deepEqual([...a].sort(), ids(all), 'a permutation');
  assert.notDeepEqual(a, ids(all), 'not the suite order');
  assert.notDeepEqual(ids(sampleTasks(all, { shuffle: '2' })), a);
  // Pinned: a change to the hashing would silently change every seeded run's tasks.
  assert.deepEqual(ids(sampleTasks(tasks(5), { shuffle: 'seed' })), ['t000', 't004', 't002', 't003', 't001']);
  assert.deepEqual(ids(sampleTasks(all, { shuffle: '1', limit: 5 })), a.slice(0, 5), 'limit after the shuffle');
});

test('--shuffle with --limit: a task added to the suite never displaces the others but by ranking above them', () => {
  const all = tasks(30);
  const before = ids(sampleTasks(all, { shuffle: 'x', limit: 10 }));
  const after = ids(sampleTasks([...all, ...tasks(40).slice(30)], { shuffle: 'x', limit: 10 }));
  const kept = after.filter((id) => before.includes(id));
  assert.deepEqual(kept, before.slice(0, kept.length), 'the old picks keep their order');
  assert.ok(
    after.filter((id) => !before.includes(id)).every((id) => Number(id.slice(1)) >= 30),
    'only new tasks come in',
  );
});
