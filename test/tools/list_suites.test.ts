import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { makeGym, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
before(async () => {
  ({ gym, cleanup } = await makeGym());
});
after(() => cleanup());

test('lists the served suites with their task counts', async () => {
  const r = await gym.callTool('list_suites', {}, testContext());
  assert.match(r.text, /^examples \(6 tasks\): /);
  const suites = (r.data as { suites: { id: string; taskCount: number }[] }).suites;
  assert.deepEqual(
    suites.map((s) => [s.id, s.taskCount]),
    [['examples', 6]],
  );
});
