import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
let outside: string;
const create = (args: Record<string, unknown>) => gym.callTool('create_file', args, testContext(), id);
const read = async (rel: string) => (await gym.episode(id).sandbox.readFile(rel)).toString('utf8');

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'roman-numerals');
  outside = await fs.mkdtemp(path.join(existsSync('/var/tmp') ? '/var/tmp' : os.homedir(), 'benchgym-outside-'));
});
after(async () => {
  await cleanup();
  await fs.rm(outside, { recursive: true, force: true });
});

test('creates a file, making parent directories', async () => {
  const r = await create({ path: 'pkg/sub/new_mod.py', content: 'A = 1\nB = 2\n' });
  assert.equal(await read('pkg/sub/new_mod.py'), 'A = 1\nB = 2\n');
  assert.deepEqual(r.data, { path: 'pkg/sub/new_mod.py', lines: 2, created: true });
  assert.match(r.text, /^Created pkg\/sub\/new_mod\.py \(2 lines\)\.$/);
});

test('refuses to replace an existing file unless overwrite is true', async () => {
  const original = await read('roman.py');
  await expectGymError(create({ path: 'roman.py', content: 'x' }), 'FILE_EXISTS', /overwrite=true/);
  assert.equal(await read('roman.py'), original);
  const r = await create({ path: 'roman.py', content: 'replaced\n', overwrite: true });
  assert.equal(await read('roman.py'), 'replaced\n');
  assert.match(r.text, /^Replaced roman\.py/);
  assert.equal((r.data as { created: boolean }).created, false);
});

test('creates an empty file', async () => {
  await create({ path: 'empty.txt', content: '' });
  assert.equal(await read('empty.txt'), '');
});

test('refuses a directory, and paths outside the workspace', async () => {
  await expectGymError(create({ path: 'tests', content: 'x', overwrite: true }), 'NOT_A_FILE');
  await expectGymError(create({ path: '../evil.txt', content: 'x' }), 'PATH_OUTSIDE_WORKSPACE');
  await expectGymError(create({ path: `${outside}/evil.txt`, content: 'x' }), 'PATH_OUTSIDE_WORKSPACE');
  assert.deepEqual(await fs.readdir(outside), []);
});

test('cannot write outside through symlinks a command planted, dangling or not', async () => {
  const r = await gym.callTool(
    'run_command',
    { command: `ln -s ${outside}/planted.txt dangling.txt && ln -s ${outside} outdir` },
    testContext(),
    id,
  );
  assert.match(r.text, /exit code 0/);
  await expectGymError(create({ path: 'dangling.txt', content: 'owned' }), 'PATH_OUTSIDE_WORKSPACE');
  await expectGymError(create({ path: 'dangling.txt', content: 'owned', overwrite: true }), 'PATH_OUTSIDE_WORKSPACE');
  await expectGymError(create({ path: 'outdir/x.txt', content: 'owned' }), 'PATH_OUTSIDE_WORKSPACE');
  assert.deepEqual(await fs.readdir(outside), []);
});

test('an invalid path argument names the field', async () => {
  await expectGymError(create({ path: '', content: 'x' }), 'INVALID_ARGUMENT', /'path'/);
  await expectGymError(create({ path: 'a.txt' }), 'INVALID_ARGUMENT', /'content'/);
});
