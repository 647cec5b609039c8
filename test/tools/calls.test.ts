/** How the gym dispatches episode tool calls: validation, unknown episodes, failures, budgets, trajectories. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Gym } from '../../src/episode/gym.ts';
import { EPISODE_TOOLS } from '../../src/tools/index.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let dataDir: string;
let cleanup: () => Promise<void>;

before(async () => {
  ({ gym, dataDir, cleanup } = await makeGym());
});
after(() => cleanup());

test('the episode tool table: every tool named once, described, and only read-only or ending tools exempt from the budget', () => {
  const names = EPISODE_TOOLS.map((t) => t.name);
  assert.equal(new Set(names).size, names.length, 'duplicate tool names');
  for (const expected of [
    'view_file',
    'edit_file',
    'insert_lines',
    'create_file',
    'undo_edit',
    'list_dir',
    'find_files',
    'search',
    'run_command',
    'run_tests',
    'view_error_log',
    'get_diff',
    'submit',
    'end_episode',
  ]) {
    assert.ok(names.includes(expected), `${expected} is missing`);
  }
  for (const t of EPISODE_TOOLS) assert.ok(t.description.length > 20, t.name);
  const exempt = EPISODE_TOOLS.filter((t) => t.exemptFromBudget).map((t) => t.name);
  for (const name of ['get_diff', 'submit', 'end_episode']) assert.ok(exempt.includes(name), `${name} should be exempt`);
  for (const name of ['edit_file', 'insert_lines', 'create_file', 'undo_edit', 'run_command', 'run_tests'])
    assert.ok(!exempt.includes(name), `${name} must count against the budget`);
});

test('schema-invalid arguments: INVALID_ARGUMENT naming the field', async () => {
  const id = await startExample(gym, 'roman-numerals');
  const err = await expectGymError(gym.callTool('view_file', { path: 5 }, testContext(), id), 'INVALID_ARGUMENT', /'path'/);
  assert.deepEqual(err.details?.fields, ['path']);
  await expectGymError(gym.callTool('view_file', {}, testContext(), id), 'INVALID_ARGUMENT', /'path'/);
  await expectGymError(
    gym.callTool('edit_file', { path: 'roman.py', old_str: 'x', new_str: 1 }, testContext(), id),
    'INVALID_ARGUMENT',
    /'new_str'/,
  );
  await expectGymError(
    gym.callTool('view_file', { path: 'roman.py', start_line: 1.5 }, testContext(), id),
    'INVALID_ARGUMENT',
    /'start_line'/,
  );
  await expectGymError(gym.callTool('view_file', 'roman.py', testContext(), id), 'INVALID_ARGUMENT', /'\(arguments\)'/);
});

test('an unknown tool, a missing episode id, an unknown episode', async () => {
  await expectGymError(gym.callTool('rm_rf', {}, testContext(), 'x'), 'INVALID_ARGUMENT', /unknown tool 'rm_rf'/);
  await expectGymError(gym.callTool('view_file', { path: 'a' }, testContext()), 'INVALID_ARGUMENT', /'episode_id'/);
  await expectGymError(
    gym.callTool('view_file', { path: 'a' }, testContext(), 'ep-0000000000000000'),
    'EPISODE_NOT_FOUND',
    /ep-0000000000000000/,
  );
});

test('a failed call leaves the episode usable and the file unchanged', async () => {
  const id = await startExample(gym, 'roman-numerals');
  const before = await gym.episode(id).sandbox.readFile('roman.py');
  await expectGymError(
    gym.callTool('edit_file', { path: 'roman.py', old_str: 'raise NotImplementedError', new_str: 'pass' }, testContext(), id),
    'EDIT_AMBIGUOUS',
  );
  await expectGymError(
    gym.callTool('edit_file', { path: 'roman.py', old_str: 'no such text anywhere', new_str: 'pass' }, testContext(), id),
    'EDIT_NO_MATCH',
  );
  await expectGymError(gym.callTool('view_file', { path: 'missing.py' }, testContext(), id), 'FILE_NOT_FOUND');
  assert.deepEqual(await gym.episode(id).sandbox.readFile('roman.py'), before);
  const r = await gym.callTool('edit_file', { path: 'roman.py', old_str: 'def to_roman', new_str: 'def to_roman_ok' }, testContext(), id);
  assert.match(r.text, /^Edited roman\.py/);
  assert.equal(gym.episode(id).state, 'running');
});

test('concurrent calls on one episode run one at a time', async () => {
  const id = await startExample(gym, 'roman-numerals');
  const order: string[] = [];
  await Promise.all([
    gym.callTool('run_command', { command: 'sleep 0.5; echo slow' }, testContext(), id).then(() => order.push('slow')),
    gym.callTool('create_file', { path: 'f.txt', content: 'x' }, testContext(), id).then(() => order.push('create')),
  ]);
  assert.deepEqual(order, ['slow', 'create']);
});

test('step budget: with max_steps 3 the 4th call is BUDGET_EXHAUSTED, but get_diff and submit still work', async () => {
  const id = await startExample(gym, 'roman-numerals', { max_steps: 3 });
  for (let i = 0; i < 3; i++) await gym.callTool('view_file', { path: 'roman.py' }, testContext(), id);
  await expectGymError(gym.callTool('view_file', { path: 'roman.py' }, testContext(), id), 'BUDGET_EXHAUSTED', /step budget \(3\)/);
  await expectGymError(gym.callTool('run_command', { command: 'true' }, testContext(), id), 'BUDGET_EXHAUSTED');
  assert.equal((await gym.callTool('get_diff', {}, testContext(), id)).text, 'No changes.');
  const verdict = await gym.callTool('submit', {}, testContext(), id);
  assert.equal((verdict.data as { reward: number }).reward, 0);
  assert.equal(gym.episode(id).state, 'submitted');
});

test('time budget: past the time limit only the exempt tools work', async () => {
  const id = await startExample(gym, 'roman-numerals', { time_limit_s: 0.3 });
  await new Promise((r) => setTimeout(r, 500));
  await expectGymError(gym.callTool('view_file', { path: 'roman.py' }, testContext(), id), 'BUDGET_EXHAUSTED', /time budget/);
  const r = await gym.callTool('end_episode', {}, testContext(), id);
  assert.equal((r.data as { state: string }).state, 'ended');
});

test('the trajectory JSONL records every call, failed ones with their error', async () => {
  const id = await startExample(gym, 'roman-numerals');
  await gym.callTool('view_file', { path: 'roman.py', start_line: 1, end_line: 2 }, testContext(), id);
  await expectGymError(gym.callTool('view_file', { path: 'nope.py' }, testContext(), id), 'FILE_NOT_FOUND');
  await expectGymError(gym.callTool('view_file', { path: 7 }, testContext(), id), 'INVALID_ARGUMENT');
  await gym.callTool('run_command', { command: 'echo traced' }, testContext(), id);
  await gym.episode(id).trajectory.flush();

  const file = path.join(dataDir, 'trajectories', `${id}.jsonl`);
  assert.equal(gym.episode(id).trajectory.file, file);
  const records = (await fs.readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(records[0].type, 'episode');
  assert.equal(records[0].episodeId, id);
  assert.equal(records[0].taskId, 'roman-numerals');
  const steps = records.filter((r) => r.type === 'step');
  assert.deepEqual(
    steps.map((s) => [s.step, s.tool, s.ok]),
    [
      [1, 'view_file', true],
      [2, 'view_file', false],
      [3, 'view_file', false],
      [4, 'run_command', true],
    ],
  );
  assert.deepEqual(steps[0].args, { path: 'roman.py', start_line: 1, end_line: 2 });
  assert.match(steps[0].observation, /Conversion between integers/);
  assert.equal(steps[1].error.code, 'FILE_NOT_FOUND');
  assert.equal(steps[2].error.code, 'INVALID_ARGUMENT');
  assert.deepEqual(steps[2].args, { path: 7 });
  assert.match(steps[3].observation, /traced/);
  for (const s of steps) {
    assert.ok(!Number.isNaN(Date.parse(s.startedAt)));
    assert.equal(typeof s.durationMs, 'number');
  }
});
