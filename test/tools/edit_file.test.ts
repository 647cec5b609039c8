import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
const edit = (args: Record<string, unknown>) => gym.callTool('edit_file', args, testContext(), id);
const read = async (rel: string) => (await gym.episode(id).sandbox.readFile(rel)).toString('utf8');
const write = (rel: string, content: string) => gym.episode(id).sandbox.writeFile(rel, content);

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'roman-numerals');
});
after(() => cleanup());

const FUNC = ['def f(x):', '    if x:', '        return   x + 1', '    return 0', ''].join('\n');

test('replaces an exact, unique match and shows the edited region with line numbers', async () => {
  const before = await read('roman.py');
  const r = await edit({ path: 'roman.py', old_str: 'def to_roman(n: int) -> str:', new_str: 'def to_roman(n: int) -> str:  # edited' });
  const after = await read('roman.py');
  assert.equal(after, before.replace('def to_roman(n: int) -> str:', 'def to_roman(n: int) -> str:  # edited'));
  assert.equal((r.data as { match: string }).match, 'exact');
  assert.equal((r.data as { firstLine: number }).firstLine, 11);
  assert.match(r.text, /^Edited roman\.py:/);
  assert.match(r.text, /^ {2}11\tdef to_roman\(n: int\) -> str: {2}# edited$/m);
});

test('a multi-line exact replacement, and a deletion with an empty new_str', async () => {
  await write('multi.py', 'a = 1\nb = 2\nc = 3\n');
  await edit({ path: 'multi.py', old_str: 'a = 1\nb = 2\n', new_str: 'a = 10\nb = 20\nbb = 21\n' });
  assert.equal(await read('multi.py'), 'a = 10\nb = 20\nbb = 21\nc = 3\n');
  await edit({ path: 'multi.py', old_str: 'bb = 21\n', new_str: '' });
  assert.equal(await read('multi.py'), 'a = 10\nb = 20\nc = 3\n');
});

test('without an exact match, matches ignoring indentation and spacing and keeps the file indentation', async () => {
  await write('ws.py', FUNC);
  const r = await edit({ path: 'ws.py', old_str: 'if x:\n    return x + 1', new_str: 'if x:\n    return x + 2' });
  assert.equal((r.data as { match: string }).match, 'whitespace-tolerant');
  assert.match(r.text, /matched ignoring whitespace/);
  assert.equal(await read('ws.py'), ['def f(x):', '    if x:', '        return x + 2', '    return 0', ''].join('\n'));
});

test('several exact matches are ambiguous: the error gives their line numbers and nothing changes', async () => {
  const content = 'x = 1\ny = 2\n\nx = 1\nz = 3\n';
  await write('amb.py', content);
  const err = await expectGymError(edit({ path: 'amb.py', old_str: 'x = 1', new_str: 'x = 9' }), 'EDIT_AMBIGUOUS', /lines 1, 4/);
  assert.deepEqual(err.details?.lines, [1, 4]);
  assert.equal(await read('amb.py'), content);
});

test('several whitespace-tolerant matches are ambiguous too', async () => {
  const content = 'if a:\n    x  =  1\nif b:\n  x = 1\n';
  await write('amb2.py', content);
  await expectGymError(
    edit({ path: 'amb2.py', old_str: 'x =   1', new_str: 'x = 2' }),
    'EDIT_AMBIGUOUS',
    /whitespace is ignored \(lines 2, 4\)/,
  );
  assert.equal(await read('amb2.py'), content);
});

test('no match: the error shows the nearest candidate lines with their numbers and nothing changes', async () => {
  await write('near.py', FUNC);
  const err = await expectGymError(edit({ path: 'near.py', old_str: 'return x + 3', new_str: 'return x' }), 'EDIT_NO_MATCH');
  assert.match(err.message, /near line 3 \(similarity/);
  assert.match(err.message, /^ {3}3\t {8}return {3}x \+ 1$/m);
  assert.equal(await read('near.py'), FUNC);
  const none = await expectGymError(edit({ path: 'near.py', old_str: 'QQQQQQ', new_str: 'x' }), 'EDIT_NO_MATCH');
  assert.match(none.message, /No similar lines found/);
});

test('replace_all changes every exact occurrence', async () => {
  await write('all.py', 'x = 1\ny = x\nx = 1\nx = 1\n');
  const r = await edit({ path: 'all.py', old_str: 'x = 1', new_str: 'x = 2', replace_all: true });
  assert.equal(await read('all.py'), 'x = 2\ny = x\nx = 2\nx = 2\n');
  assert.equal((r.data as { replacements: number }).replacements, 3);
  assert.match(r.text, /in 3 places/);
});

test('errors: missing file, empty old_str, binary file', async () => {
  await expectGymError(edit({ path: 'missing.py', old_str: 'a', new_str: 'b' }), 'FILE_NOT_FOUND');
  await expectGymError(edit({ path: 'roman.py', old_str: '', new_str: 'b' }), 'INVALID_ARGUMENT', /'old_str'/);
  await gym.episode(id).sandbox.writeFile('bin.dat', Buffer.from([0, 1, 2, 3]));
  await expectGymError(edit({ path: 'bin.dat', old_str: 'a', new_str: 'b' }), 'BINARY_FILE');
});

test('the edit shows up in get_diff', async () => {
  const diff = await gym.callTool('get_diff', {}, testContext(), id);
  assert.match(diff.text, /^\+def to_roman\(n: int\) -> str: {2}# edited$/m);
});
