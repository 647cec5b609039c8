import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeGym, startExample, testContext } from './helpers.ts';

test('an example episode runs its visible tests and scores an untouched submission 0', async () => {
  const { gym, cleanup } = await makeGym();
  try {
    const id = await startExample(gym, 'roman-numerals');
    const run = await gym.callTool('run_tests', {}, testContext(), id);
    assert.match(run.text, /failed/);
    const verdict = await gym.callTool('submit', {}, testContext(), id);
    assert.equal((verdict.data as { reward: number }).reward, 0);
  } finally {
    await cleanup();
  }
});
