import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
const view = (args: Record<string, unknown>) => gym.callTool('view_file', args, testContext(), id);
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'roman-numerals');
  const sb = gym.episode(id).sandbox;
  await sb.writeFile('big.txt', lines(250));
  await sb.writeFile('long.txt', `short\n${'x'.repeat(5000)}\nafter\n`);
  await sb.writeFile('blob.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13, 1, 2, 3]));
  await sb.writeFile('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  await sb.writeFile('empty.txt', '');
});
after(() => cleanup());

test('shows a workspace file with line numbers', async () => {
  const r = await view({ path: 'roman.py' });
  assert.match(r.text, /^roman\.py \(lines 1-\d+ of \d+\)\n/);
  assert.match(r.text, /^ {3}1\t"""Conversion between integers and Roman numerals\.$/m);
  assert.match(r.text, /^ {2}11\tdef to_roman\(n: int\) -> str:$/m);
  assert.equal((r.data as { startLine: number }).startLine, 1);
});

test('shows the first 100 lines by default and says how to see more', async () => {
  const r = await view({ path: 'big.txt' });
  assert.match(r.text, /^big\.txt \(lines 1-100 of 250\)/);
  assert.match(r.text, /^ 100\tline 100$/m);
  assert.doesNotMatch(r.text, /line 101/);
  assert.match(r.text, /\[150 more lines: view_file with start_line=101\]/);
  assert.deepEqual({ ...r.data, content: undefined }, { path: 'big.txt', startLine: 1, endLine: 100, totalLines: 250, content: undefined });
  assert.equal((r.data as { content: string }).content.split('\n').length, 100);
});

test('shows a requested range', async () => {
  const r = await view({ path: 'big.txt', start_line: 120, end_line: 125 });
  assert.match(r.text, /\(lines 120-125 of 250\)/);
  assert.deepEqual((r.data as { content: string }).content.split('\n'), [
    'line 120',
    'line 121',
    'line 122',
    'line 123',
    'line 124',
    'line 125',
  ]);
  assert.match(r.text, /^ 120\tline 120$/m);
  assert.match(r.text, /\[125 more lines: view_file with start_line=126\]/);
});

test('a range running past the end stops at the last line', async () => {
  const r = await view({ path: 'big.txt', start_line: 240 });
  assert.match(r.text, /\(lines 240-250 of 250\)/);
  assert.match(r.text, /\tline 250$/);
  assert.doesNotMatch(r.text, /more lines/);
  const wide = await view({ path: 'big.txt', start_line: 249, end_line: 10_000 });
  assert.equal((wide.data as { endLine: number }).endLine, 250);
});

test('a start past the end, or an end before the start, is an invalid argument naming the field', async () => {
  await expectGymError(view({ path: 'big.txt', start_line: 251 }), 'INVALID_ARGUMENT', /'start_line'.*250 lines/);
  await expectGymError(view({ path: 'big.txt', start_line: 50, end_line: 40 }), 'INVALID_ARGUMENT', /'end_line'/);
  await expectGymError(view({ path: 'big.txt', start_line: 0 }), 'INVALID_ARGUMENT', /'start_line'/);
});

test('refuses binary files', async () => {
  await expectGymError(view({ path: 'blob.bin' }), 'BINARY_FILE', /blob\.bin/);
  await expectGymError(view({ path: 'latin1.txt' }), 'BINARY_FILE');
});

test('UTF-8 text is text, also when the 8 KiB probe window cuts a character in two', async () => {
  const sb = gym.episode(id).sandbox;
  await sb.writeFile('utf8.txt', 'café ünïcödé ✓ 𝄞\n');
  assert.match((await view({ path: 'utf8.txt' })).text, /café ünïcödé ✓ 𝄞/);
  // 8191 ASCII bytes, then a 3-byte character straddling the window's end.
  const prefix = ('a'.repeat(90) + '\n').repeat(90) + 'b';
  assert.equal(Buffer.byteLength(prefix), 8191);
  await sb.writeFile('straddle.txt', prefix + '✓ done\n');
  assert.match((await view({ path: 'straddle.txt', start_line: 91 })).text, /\tb✓ done$/m);
});

test('cuts very long lines and says how much was cut', async () => {
  const r = await view({ path: 'long.txt' });
  const shown = r.text.split('\n').find((l) => l.includes('xxx'))!;
  assert.ok(shown.length < 2100, `line of ${shown.length} characters shown`);
  assert.match(shown, /\[line cut: 3000 more characters\]/);
  assert.match(r.text, /\tafter$/m);
});

test('an empty file says so', async () => {
  const r = await view({ path: 'empty.txt' });
  assert.match(r.text, /empty\.txt \(empty file\)/);
  assert.equal((r.data as { totalLines: number }).totalLines, 0);
});

test('a missing file, a directory, and a path outside are errors with their codes', async () => {
  await expectGymError(view({ path: 'no_such.py' }), 'FILE_NOT_FOUND', /no_such\.py/);
  await expectGymError(view({ path: 'tests' }), 'NOT_A_FILE', /list_dir/);
  await expectGymError(view({ path: '../../../etc/passwd' }), 'PATH_OUTSIDE_WORKSPACE');
  await expectGymError(view({ path: '/etc/passwd' }), 'PATH_OUTSIDE_WORKSPACE');
});

test('an absolute path inside the workspace (as commands see it) works', async () => {
  const workdir = gym.episode(id).sandbox.workdir;
  const r = await view({ path: `${workdir}/roman.py`, start_line: 1, end_line: 1 });
  assert.match(r.text, /Conversion between integers/);
});
