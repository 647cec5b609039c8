import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exampleEpisode } from '../helpers.ts';

const episode = exampleEpisode('roman-numerals');
const call = episode.call;

test('no changes at the start', async () => {
  const r = await call('get_diff');
  assert.equal(r.text, 'No changes.');
  assert.deepEqual(r.data, { diff: '', files: [], bytes: 0 });
});

test('shows edits, new files and deletions as a git diff, listing the files', async () => {
  await call('edit_file', {
    path: 'roman.py',
    old_str: 'def to_roman(n: int) -> str:',
    new_str: 'def to_roman(n: int) -> str:  # changed',
  });
  await call('create_file', { path: 'helpers/util.py', content: 'X = 1\n' });
  await call('run_command', { command: 'rm tests/test_roman.py' });
  const r = await call('get_diff');
  const data = r.data as { diff: string; files: string[]; bytes: number };
  assert.deepEqual(data.files, ['helpers/util.py', 'roman.py', 'tests/test_roman.py']);
  assert.equal(r.text, data.diff);
  assert.match(data.diff, /^\+def to_roman\(n: int\) -> str: {2}# changed$/m);
  assert.match(data.diff, /^new file mode 100644\n(?:index .*\n)?--- \/dev\/null\n\+\+\+ b\/helpers\/util\.py$/m);
  assert.match(data.diff, /^deleted file mode 100644$/m);
  assert.equal(data.bytes, Buffer.byteLength(data.diff));
});

test('caches and byte-code written by commands are not part of the diff', async () => {
  await call('run_command', {
    command:
      "python -c \"import py_compile; py_compile.compile('roman.py', " +
      "cfile='__pycache__/roman.cpython-311.pyc')\"; mkdir -p .pytest_cache && touch .pytest_cache/x",
  });
  const r = await call('get_diff');
  assert.doesNotMatch(r.text, /__pycache__|\.pyc|pytest_cache/);
});

test('a diff that undoes itself is empty again', async () => {
  await call('undo_edit', { path: 'roman.py' });
  await call('undo_edit', { path: 'helpers/util.py' });
  await call('run_command', { command: 'git --version >/dev/null; true' });
  const task = episode.gym.episode(episode.id).task;
  const original = await import('node:fs').then((fs) =>
    fs.promises.readFile(`${(task.workspace as { path: string }).path}/tests/test_roman.py`, 'utf8'),
  );
  await call('create_file', { path: 'tests/test_roman.py', content: original });
  const r = await call('get_diff');
  assert.equal(r.text, 'No changes.');
});

test('a 60 MB file makes get_diff and submit fail with DIFF_TOO_LARGE naming the size and the limit; the episode goes on', async () => {
  const { expectGymError } = await import('../helpers.ts');
  await call('run_command', { command: "yes 'a line of text that makes a big file, sixty megabytes of it' | head -c 60000000 > big.txt" });
  const err = await expectGymError(
    call('get_diff'),
    'DIFF_TOO_LARGE',
    /diff is 6\d{7} bytes \(\d+\.\d MiB\), over the limit of 16777216 bytes \(16\.0 MiB\)/,
  );
  assert.equal(err.details?.limit, 16 * 1024 * 1024);
  assert.ok(Number(err.details?.bytes) > 60_000_000);
  const gym = episode.gym;
  await expectGymError(call('submit'), 'DIFF_TOO_LARGE');
  assert.equal(gym.episode(episode.id).state, 'running', 'a refused submit leaves the episode running');
  assert.match((await call('view_file', { path: 'roman.py' })).text, /def to_roman/);
  await call('run_command', { command: 'rm big.txt' });
  await call('create_file', { path: 'small.txt', content: 'small\n' });
  const r = await call('get_diff');
  assert.deepEqual((r.data as { files: string[] }).files, ['small.txt']);
  const verdict = (await call('submit')).data as { reward: number };
  assert.equal(verdict.reward, 0);
});
