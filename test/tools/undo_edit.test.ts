import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
const call = (name: string, args: Record<string, unknown>) => gym.callTool(name, args, testContext(), id);
const read = async (rel: string) => (await gym.episode(id).sandbox.readFile(rel)).toString('utf8');

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'roman-numerals');
});
after(() => cleanup());

test('nothing to undo for a file never edited', async () => {
  await expectGymError(call('undo_edit', { path: 'roman.py' }), 'NOTHING_TO_UNDO', /roman\.py/);
});

test('undoes edits one at a time, newest first, then has nothing left', async () => {
  const original = await read('roman.py');
  await call('edit_file', { path: 'roman.py', old_str: 'def to_roman', new_str: 'def to_roman_v1' });
  const afterFirst = await read('roman.py');
  await call('insert_lines', { path: 'roman.py', line: 0, text: '# top' });
  const r = await call('undo_edit', { path: 'roman.py' });
  assert.equal(await read('roman.py'), afterFirst);
  assert.deepEqual(r.data, { path: 'roman.py', removed: false, remainingUndos: 1 });
  await call('undo_edit', { path: 'roman.py' });
  assert.equal(await read('roman.py'), original);
  await expectGymError(call('undo_edit', { path: 'roman.py' }), 'NOTHING_TO_UNDO');
});

test('undoing a creation removes the file', async () => {
  await call('create_file', { path: 'made/new.py', content: 'x = 1\n' });
  const r = await call('undo_edit', { path: 'made/new.py' });
  assert.equal((r.data as { removed: boolean }).removed, true);
  assert.match(r.text, /Removed made\/new\.py/);
  assert.equal(await gym.episode(id).sandbox.stat('made/new.py'), null);
});

test('undoing an overwrite restores the old content', async () => {
  const original = await read('tests/test_roman.py');
  await call('create_file', { path: 'tests/test_roman.py', content: 'gutted\n', overwrite: true });
  await call('undo_edit', { path: 'tests/test_roman.py' });
  assert.equal(await read('tests/test_roman.py'), original);
});

test('the history is per file, however its path is spelled', async () => {
  const original = await read('roman.py');
  await call('edit_file', { path: './roman.py', old_str: 'def from_roman', new_str: 'def from_roman_v2' });
  await call('undo_edit', { path: 'roman.py' });
  assert.equal(await read('roman.py'), original);
  const workdir = gym.episode(id).sandbox.workdir;
  await call('edit_file', { path: 'roman.py', old_str: 'def from_roman', new_str: 'def from_roman_v3' });
  await call('undo_edit', { path: `${workdir}/roman.py` });
  assert.equal(await read('roman.py'), original);
});

test('after undoing everything the diff is empty again', async () => {
  const diff = await call('get_diff', {});
  assert.equal(diff.text, 'No changes.');
});
