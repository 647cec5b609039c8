import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
const find = async (args: Record<string, unknown>) => {
  const r = await gym.callTool('find_files', args, testContext(), id);
  return { ...r, files: (r.data as { files: string[] }).files };
};

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'inventory-discount-bug');
});
after(() => cleanup());

test('a name pattern matches files anywhere', async () => {
  const r = await find({ pattern: '*.py' });
  assert.deepEqual(r.files, [
    'shop/__init__.py',
    'shop/cart.py',
    'shop/inventory.py',
    'shop/pricing.py',
    'shop/receipt.py',
    'tests/test_cart.py',
    'tests/test_inventory.py',
  ]);
  assert.match(r.text, /^7 files match \*\.py:\nshop\/__init__\.py/);
});

test('path patterns: **, directories, braces, ?', async () => {
  assert.deepEqual((await find({ pattern: '**/test_*.py' })).files, ['tests/test_cart.py', 'tests/test_inventory.py']);
  assert.deepEqual((await find({ pattern: 'shop/c*.py' })).files, ['shop/cart.py']);
  assert.deepEqual((await find({ pattern: 'shop/{cart,pricing}.py' })).files, ['shop/cart.py', 'shop/pricing.py']);
  assert.deepEqual((await find({ pattern: 'tests/test_????.py' })).files, ['tests/test_cart.py']);
});

test('path restricts the search to a directory', async () => {
  assert.deepEqual((await find({ pattern: '*.py', path: 'tests' })).files, ['tests/test_cart.py', 'tests/test_inventory.py']);
});

test('no match says so', async () => {
  const r = await find({ pattern: '*.java' });
  assert.deepEqual(r.files, []);
  assert.equal(r.text, 'No files match *.java.');
});

test('directories are not listed as matches; files below them are', async () => {
  assert.deepEqual((await find({ pattern: 'shop' })).files, []);
  assert.deepEqual((await find({ pattern: 'shop/**' })).files.length, 5);
});

test('errors: an empty pattern names the field; a path outside is refused', async () => {
  await expectGymError(find({ pattern: '' }), 'INVALID_ARGUMENT', /'pattern'/);
  await expectGymError(find({ pattern: '*', path: '../..' }), 'PATH_OUTSIDE_WORKSPACE');
});
