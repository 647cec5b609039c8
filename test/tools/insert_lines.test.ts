import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
const insert = (args: Record<string, unknown>) => gym.callTool('insert_lines', args, testContext(), id);
const read = async (rel: string) => (await gym.episode(id).sandbox.readFile(rel)).toString('utf8');

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'roman-numerals');
  await gym.episode(id).sandbox.writeFile('f.txt', 'one\ntwo\nthree\n');
});
after(() => cleanup());

test('inserts after a given line and shows the region with line numbers', async () => {
  const r = await insert({ path: 'f.txt', line: 2, text: 'two and a half\n' });
  assert.equal(await read('f.txt'), 'one\ntwo\ntwo and a half\nthree\n');
  assert.match(r.text, /^Inserted 1 lines after line 2 of f\.txt:/);
  assert.match(r.text, /^ {3}3\ttwo and a half$/m);
  assert.deepEqual(r.data, { path: 'f.txt', after: 2, inserted: 1 });
});

test('line 0 inserts at the top; the text needs no final newline', async () => {
  await insert({ path: 'f.txt', line: 0, text: '# header\n# second' });
  assert.equal(await read('f.txt'), '# header\n# second\none\ntwo\ntwo and a half\nthree\n');
});

test('the last line number appends at the end', async () => {
  await insert({ path: 'f.txt', line: 6, text: 'four' });
  assert.equal(await read('f.txt'), '# header\n# second\none\ntwo\ntwo and a half\nthree\nfour\n');
});

test('inserts into a file without a final newline', async () => {
  await gym.episode(id).sandbox.writeFile('nonl.txt', 'a\nb');
  await insert({ path: 'nonl.txt', line: 2, text: 'c' });
  assert.equal(await read('nonl.txt'), 'a\nb\nc\n');
});

test('a line past the end is an invalid argument and nothing changes', async () => {
  const before = await read('f.txt');
  await expectGymError(insert({ path: 'f.txt', line: 99, text: 'x' }), 'INVALID_ARGUMENT', /'line'.*7 lines/);
  await expectGymError(insert({ path: 'f.txt', line: -1, text: 'x' }), 'INVALID_ARGUMENT', /'line'/);
  assert.equal(await read('f.txt'), before);
});

test('a missing file is FILE_NOT_FOUND', async () => {
  await expectGymError(insert({ path: 'nope.txt', line: 0, text: 'x' }), 'FILE_NOT_FOUND');
});
