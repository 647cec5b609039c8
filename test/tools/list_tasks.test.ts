import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
before(async () => {
  ({ gym, cleanup } = await makeGym());
});
after(() => cleanup());

test('lists the tasks of the examples suite by default, without hidden tests or solutions', async () => {
  const r = await gym.callTool('list_tasks', {}, testContext());
  assert.match(r.text, /^examples: 6 tasks\n/);
  assert.match(r.text, /^roman-numerals {2}\[python, function\] {2}Roman numeral conversion$/m);
  assert.match(r.text, /^java-bracket-matcher {2}\[java, function\]/m);
  const tasks = (r.data as { tasks: { id: string }[] }).tasks;
  assert.equal(tasks.length, 6);
  assert.doesNotMatch(JSON.stringify(r.data), /test_roman_hidden|def to_roman|solution/);
});

test('pages with offset and limit', async () => {
  const r = await gym.callTool('list_tasks', { suite: 'examples', offset: 2, limit: 2 }, testContext());
  const ids = (r.data as { tasks: { id: string }[] }).tasks.map((t) => t.id);
  assert.deepEqual(ids, ['median-edge-cases', 'parse-duration']);
  assert.match(r.text, /\[2 more: offset=4\]/);
});

test('an unknown suite is SUITE_NOT_FOUND; a bad limit names the field', async () => {
  await expectGymError(gym.callTool('list_tasks', { suite: 'nope' }, testContext()), 'SUITE_NOT_FOUND');
  await expectGymError(gym.callTool('list_tasks', { limit: 0 }, testContext()), 'INVALID_ARGUMENT', /'limit'/);
});
