import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { GymError } from '../../src/errors.ts';
import { makeGym, startExample, testContext } from '../helpers.ts';

test('an idle episode expires: its sandbox is removed and calls say EPISODE_ENDED', async () => {
  const { gym, cleanup } = await makeGym({ defaults: { idleTtlMs: 400 } });
  try {
    const id = await startExample(gym, 'roman-numerals');
    const workdir = gym.episode(id).sandbox.workdir;
    assert.ok(existsSync(workdir));
    // Expiry is due 400 ms after the last call; the sandbox's removal follows it (seconds on a loaded machine).
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(gym.episode(id).state, 'expired');
    const deadline = Date.now() + 60_000;
    while (existsSync(workdir) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.ok(!existsSync(workdir), 'the sandbox is gone');
    await assert.rejects(
      gym.callTool('view_file', { path: 'roman.py' }, testContext(), id),
      (e: unknown) => e instanceof GymError && e.code === 'EPISODE_ENDED',
    );
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

test(
  "a sandbox that fails after a tool ran the agent's code is kept on the " +
    "episode and flagged afterAgentCode; before that it is the infrastructure's",
  async () => {
    const { gym, cleanup } = await makeGym();
    try {
      const failing = async (id: string) => {
        // The sandbox goes away under the episode (destroyed from the host, as a killed executor or container would).
        await gym.episode(id).sandbox.destroy();
        return gym.callTool('view_file', { path: 'roman.py' }, testContext(), id).then(
          () => assert.fail('the call succeeded on a destroyed sandbox'),
          (e: unknown) => e as GymError,
        );
      };
      const early = await startExample(gym, 'roman-numerals');
      await gym.callTool('list_dir', { path: '.' }, testContext(), early);
      const before = await failing(early);
      assert.equal(before.code, 'SANDBOX_UNAVAILABLE');
      assert.equal(before.details?.afterAgentCode, undefined);
      assert.deepEqual([gym.episode(early).codeRan, gym.episode(early).sandboxFailure], [false, undefined]);

      const late = await startExample(gym, 'roman-numerals');
      await gym.callTool('run_command', { command: 'true' }, testContext(), late);
      assert.equal(gym.episode(late).codeRan, true);
      const after = await failing(late);
      assert.deepEqual([after.code, after.details?.afterAgentCode], ['SANDBOX_UNAVAILABLE', true]);
      assert.deepEqual(gym.episode(late).sandboxFailure, {
        code: 'SANDBOX_UNAVAILABLE',
        message: after.message,
        tool: 'view_file',
        step: 2,
      });
      // Only the first failure is kept.
      const flagged = (e: unknown) => e instanceof GymError && e.code === 'SANDBOX_UNAVAILABLE' && e.details?.afterAgentCode === true;
      await assert.rejects(gym.callTool('submit', {}, testContext(), late), flagged);
      assert.equal(gym.episode(late).sandboxFailure?.tool, 'view_file');
    } finally {
      await cleanup();
    }
  },
);

test("a step's trajectory record is in the file when the call returns: a crash after the answer loses no finished step", async () => {
  const { gym, cleanup } = await makeGym();
  try {
    const id = await startExample(gym, 'roman-numerals');
    const file = gym.episode(id).trajectory.file;
    const records = () =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; step?: number; tool?: string; ok?: boolean });
    for (let step = 1; step <= 20; step++) {
      await gym.callTool('view_file', { path: 'roman.py' }, testContext(), id);
      // Read at once, synchronously: no later turn of the event loop may be what writes it.
      assert.deepEqual(
        records()
          .filter((r) => r.type === 'step')
          .map((r) => r.step),
        Array.from({ length: step }, (_, i) => i + 1),
      );
    }
    await assert.rejects(gym.callTool('view_file', { path: 'no-such-file.py' }, testContext(), id));
    assert.deepEqual(records().at(-1), { ...records().at(-1), type: 'step', step: 21, tool: 'view_file', ok: false });
    await gym.callTool('end_episode', {}, testContext(), id);
    await gym.callTool('get_diff', {}, testContext(), id);
    assert.deepEqual(
      records()
        .slice(-2)
        .map((r) => r.tool ?? r.type),
      ['end_episode', 'get_diff'],
      'records after the end are written too',
    );
  } finally {
    await cleanup();
  }
});
