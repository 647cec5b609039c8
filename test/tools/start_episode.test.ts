import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, testContext } from '../helpers.ts';
import { EXAMPLES_DIR } from '../../envs/examples/index.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
before(async () => {
  ({ gym, cleanup } = await makeGym());
});
after(() => cleanup());

test('starts an episode: id, prompt, workspace layout, budgets and sandbox facts', async () => {
  const ctx = testContext();
  const r = await gym.callTool('start_episode', { task_id: 'roman-numerals', max_steps: 40 }, ctx);
  const data = r.data as Record<string, unknown> & {
    files: string[];
    budgets: { maxSteps: number; deadline: string };
    sandbox: { backend: string; isolation: string };
  };
  assert.match(String(data.episodeId), /^ep-[0-9a-f]{16}$/);
  assert.equal(data.taskId, 'roman-numerals');
  assert.equal(data.suite, 'examples');
  assert.match(String(data.prompt), /Implement the two functions in `roman\.py`/);
  assert.deepEqual(data.files, ['roman.py', 'tests/', 'tests/test_roman.py']);
  assert.equal(data.hasVisibleTests, true);
  assert.equal(data.budgets.maxSteps, 40);
  assert.ok(Date.parse(data.budgets.deadline) > Date.now());
  assert.equal(data.sandbox.backend, 'local');
  assert.match(r.text, new RegExp(`^Episode ${data.episodeId} started for examples/roman-numerals\\.`));
  assert.match(r.text, /Budget: 40 tool calls/);
  assert.ok(ctx.messages.includes('ready'));
});

test('the workspace is a copy: changes do not touch the suite, and episodes are independent', async () => {
  const a = (await gym.callTool('start_episode', { task_id: 'roman-numerals' }, testContext())).data as { episodeId: string };
  const b = (await gym.callTool('start_episode', { task_id: 'roman-numerals' }, testContext())).data as { episodeId: string };
  const source = path.join(EXAMPLES_DIR, 'tasks', 'roman-numerals', 'workspace', 'roman.py');
  const before = await fs.readFile(source, 'utf8');
  await gym.callTool('create_file', { path: 'roman.py', content: 'changed\n', overwrite: true }, testContext(), a.episodeId);
  assert.equal(await fs.readFile(source, 'utf8'), before);
  const inB = await gym.callTool('view_file', { path: 'roman.py', start_line: 1, end_line: 1 }, testContext(), b.episodeId);
  assert.match(inB.text, /Conversion between integers/);
});

test('errors: unknown task, unknown suite, unknown prompt variant, bad budget', async () => {
  await expectGymError(gym.callTool('start_episode', { task_id: 'nope' }, testContext()), 'TASK_NOT_FOUND');
  await expectGymError(gym.callTool('start_episode', { task_id: 'roman-numerals', suite: 'nope' }, testContext()), 'SUITE_NOT_FOUND');
  await expectGymError(
    gym.callTool('start_episode', { task_id: 'roman-numerals', prompt_variant: 'pirate' }, testContext()),
    'INVALID_ARGUMENT',
    /'prompt_variant'/,
  );
  await expectGymError(
    gym.callTool('start_episode', { task_id: 'roman-numerals', max_steps: 0 }, testContext()),
    'INVALID_ARGUMENT',
    /'max_steps'/,
  );
  await expectGymError(gym.callTool('start_episode', {}, testContext()), 'INVALID_ARGUMENT', /'task_id'/);
});
