import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { GymError } from '../../src/errors.ts';
import { makeGym, startExample, testContext } from '../helpers.ts';

test('an idle episode expires: its sandbox is removed and calls say EPISODE_ENDED', async () => {
  const { gym, cleanup } = await makeGym({ defaults: { idleTtlMs: 400 } });
  try {
    const id = await startExample(gym, 'roman-numerals');
    const workdir = gym.episode(id).sandbox.workdir;
    assert.ok(existsSync(workdir));
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(gym.episode(id).state, 'expired');
    assert.ok(!existsSync(workdir), 'the sandbox is gone');
    await assert.rejects(gym.callTool('view_file', { path: 'roman.py' }, testContext(), id), (e: unknown) => e instanceof GymError && e.code === 'EPISODE_ENDED');
    const diff = await gym.callTool('get_diff', {}, testContext(), id);
    assert.equal(diff.text, 'No changes.');
  } finally {
    await cleanup();
  }
});

test('the episode budget caps running episodes with CAPACITY', async () => {
  const { gym, cleanup } = await makeGym({ defaults: { maxEpisodes: 1 } });
  try {
    const first = await startExample(gym, 'roman-numerals');
    await assert.rejects(startExample(gym, 'roman-numerals'), (e: unknown) => e instanceof GymError && e.code === 'CAPACITY');
    await gym.callTool('end_episode', {}, testContext(), first);
    await startExample(gym, 'roman-numerals');
  } finally {
    await cleanup();
  }
});
