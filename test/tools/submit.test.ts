import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { Gym } from '../../src/episode/gym.ts';
import type { LocalSandbox } from '../../src/sandbox/local/index.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;

before(async () => {
  ({ gym, cleanup } = await makeGym());
});
after(() => cleanup());

test('the reference solution written through create_file scores 1; afterwards only get_diff and the verdict remain', async () => {
  const id = await startExample(gym, 'roman-numerals');
  const call = (name: string, args: Record<string, unknown> = {}) => gym.callTool(name, args, testContext(), id);
  const episode = gym.episode(id);
  const root = (episode.sandbox as LocalSandbox).root;
  for (const [rel, content] of Object.entries(episode.task.solution!.files!))
    await call('create_file', { path: rel, content, overwrite: true });

  const ctx = testContext();
  const r = await gym.callTool('submit', {}, ctx, id);
  const verdict = r.data as unknown as Verdict;
  assert.equal(verdict.reward, 1);
  assert.equal(verdict.status, 'passed');
  assert.ok(
    verdict.tests.some((t) => t.name.startsWith('tests/test_roman_hidden.py::')),
    'the hidden tests ran',
  );
  assert.ok(verdict.tests.every((t) => t.status === 'passed'));
  assert.match(r.text, /^Verdict: PASSED \(reward 1\)\nHidden tests: \d+ passed, 0 failed, 0 errors, 0 skipped/);
  assert.ok(
    ctx.messages.some((m) => /hidden tests/.test(m)),
    'no progress was reported',
  );
  assert.equal(episode.state, 'submitted');
  assert.equal(existsSync(root), false, 'the episode sandbox is gone');

  await expectGymError(call('edit_file', { path: 'roman.py', old_str: 'a', new_str: 'b' }), 'EPISODE_ENDED');
  await expectGymError(call('create_file', { path: 'x.py', content: '' }), 'EPISODE_ENDED');
  await expectGymError(call('run_command', { command: 'true' }), 'EPISODE_ENDED');
  await expectGymError(call('run_tests'), 'EPISODE_ENDED');
  await expectGymError(call('view_file', { path: 'roman.py' }), 'EPISODE_ENDED');

  const diff = await call('get_diff');
  assert.deepEqual((diff.data as { files: string[] }).files, ['roman.py']);
  assert.match(diff.text, /^\+ {4}for value, symbol in _NUMERALS:$/m);

  const again = await call('submit');
  assert.deepEqual(again.data, r.data);
});

test('an untouched start state scores 0 with the failing hidden tests listed', async () => {
  const id = await startExample(gym, 'roman-numerals');
  const r = await gym.callTool('submit', {}, testContext(), id);
  const verdict = r.data as unknown as Verdict;
  assert.equal(verdict.reward, 0);
  assert.equal(verdict.status, 'failed');
  assert.ok(verdict.tests.length > 11);
  assert.ok(verdict.tests.every((t) => t.status === 'failed'));
  assert.match(r.text, /^Verdict: FAILED \(reward 0\)/);
  assert.equal(verdict.error, undefined);
});

test('a solution that passes the visible tests but not the hidden ones scores 0', async () => {
  const id = await startExample(gym, 'roman-numerals');
  // Table lookups that satisfy exactly the visible cases.
  const content = [
    'def to_roman(n):',
    '    if n == 0:',
    '        raise ValueError(n)',
    '    return {1: "I", 4: "IV", 9: "IX", 14: "XIV", 40: "XL", 1994: "MCMXCIV"}[n]',
    '',
    'def from_roman(s):',
    '    return {"III": 3, "LVIII": 58, "XC": 90, "MMXXIV": 2024}[s]',
    '',
  ].join('\n');
  await gym.callTool('create_file', { path: 'roman.py', content, overwrite: true }, testContext(), id);
  const visible = await gym.callTool('run_tests', {}, testContext(), id);
  assert.match(visible.text, /^Visible tests: 11 passed, 0 failed/);
  const verdict = (await gym.callTool('submit', {}, testContext(), id)).data as unknown as Verdict;
  assert.equal(verdict.reward, 0);
  assert.ok(verdict.tests.some((t) => t.status === 'passed'));
  assert.ok(verdict.tests.some((t) => t.status === 'failed'));
});

test('the trajectory ends with the verdict and the diff', async () => {
  const id = await startExample(gym, 'roman-numerals');
  await gym.callTool('create_file', { path: 'note.txt', content: 'hi\n' }, testContext(), id);
  await gym.callTool('submit', {}, testContext(), id);
  const { promises: fs } = await import('node:fs');
  const records = (await fs.readFile(gym.episode(id).trajectory.file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const verdict = records.find((r) => r.type === 'verdict');
  assert.ok(verdict, 'no verdict record');
  assert.equal(verdict.verdict.reward, 0);
  assert.match(verdict.diff, /note\.txt/);
});

test('the verdict an agent gets carries no hidden-test failure texts and no server paths', async () => {
  const id = await startExample(gym, 'roman-numerals');
  const r = await gym.callTool('submit', {}, testContext(), id);
  const data = r.data as Record<string, any>;
  assert.equal(data.reward, 0);
  assert.equal(data.logRef, undefined);
  assert.ok(data.tests.length > 10);
  for (const t of data.tests) {
    assert.deepEqual(
      Object.keys(t)
        .filter((k) => k !== 'durationMs')
        .sort(),
      ['name', 'status'],
    );
  }
  assert.doesNotMatch(JSON.stringify(data), /NotImplementedError|Traceback/);
  // The server keeps the whole verdict for itself.
  assert.ok(gym.episode(id).verdict!.tests.some((t) => t.details?.includes('NotImplementedError')));
});
