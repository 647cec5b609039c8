import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import type { DirEntry } from '../../src/sandbox/types.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
const list = (args: Record<string, unknown>) => gym.callTool('list_dir', args, testContext(), id);

/** Reads an indented tree back into full paths (directories end with /). */
function parseTree(text: string, base = ''): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of text.split('\n').slice(1)) {
    if (!line.trim() || line.startsWith('[')) continue;
    const depth = (line.length - line.trimStart().length) / 2;
    const name = line.trim();
    stack.length = depth;
    out.push(base + [...stack, name].join('/'));
    stack.push(name.replace(/[/@]$/, ''));
  }
  return out;
}

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'inventory-discount-bug');
});
after(() => cleanup());

test('lists the workspace as a tree, two levels deep by default', async () => {
  const r = await list({});
  assert.deepEqual(parseTree(r.text).sort(), [
    'shop/',
    'shop/__init__.py',
    'shop/cart.py',
    'shop/inventory.py',
    'shop/pricing.py',
    'shop/receipt.py',
    'tests/',
    'tests/test_cart.py',
    'tests/test_inventory.py',
  ]);
  assert.match(r.text, /^shop\/$/m);
  assert.match(r.text, /^ {2}cart\.py$/m);
  const entries = (r.data as { entries: DirEntry[] }).entries;
  assert.equal(entries.find((e) => e.path === 'shop/cart.py')!.type, 'file');
  assert.ok(entries.find((e) => e.path === 'shop/cart.py')!.size > 0);
});

test('depth 1 lists only the top level', async () => {
  assert.deepEqual(parseTree((await list({ depth: 1 })).text), ['shop/', 'tests/']);
});

test('a subdirectory lists relative to itself', async () => {
  const r = await list({ path: 'tests' });
  assert.match(r.text, /^tests\ntest_cart\.py\ntest_inventory\.py$/);
});

test('caches and .git are left out', async () => {
  const r1 = await gym.callTool(
    'run_command',
    { command: 'mkdir -p shop/__pycache__ .git && touch shop/__pycache__/cart.cpython-311.pyc .git/HEAD' },
    testContext(),
    id,
  );
  assert.match(r1.text, /exit code 0/);
  const r = await list({ depth: 3 });
  assert.doesNotMatch(r.text, /__pycache__|\.git/);
});

test('children appear under their own directory even when names share a prefix', async () => {
  const sb = gym.episode(id).sandbox;
  for (const f of ['mix/pkg/mod.py', 'mix/pkg.py', 'mix/pkg_util/helpers.py', 'mix/pkg-extra/k.py', 'mix/pkg.d/conf', 'mix/Pkg2/x.py'])
    await sb.writeFile(f, 'x\n');
  const r = await list({ path: 'mix', depth: 2 });
  assert.deepEqual(parseTree(r.text, 'mix/').sort(), [
    'mix/Pkg2/',
    'mix/Pkg2/x.py',
    'mix/pkg-extra/',
    'mix/pkg-extra/k.py',
    'mix/pkg.d/',
    'mix/pkg.d/conf',
    'mix/pkg.py',
    'mix/pkg/',
    'mix/pkg/mod.py',
    'mix/pkg_util/',
    'mix/pkg_util/helpers.py',
  ]);
});

test('symlinks are marked and not followed', async () => {
  const r1 = await gym.callTool('run_command', { command: 'mkdir -p links && ln -s / links/root' }, testContext(), id);
  assert.match(r1.text, /exit code 0/);
  const r = await list({ path: 'links', depth: 3 });
  assert.equal(r.text, 'links\nroot@');
});

test('errors: a missing directory, a file, a path outside', async () => {
  await expectGymError(list({ path: 'nope' }), 'FILE_NOT_FOUND');
  await expectGymError(list({ path: 'shop/cart.py' }), 'NOT_A_DIRECTORY');
  await expectGymError(list({ path: '..' }), 'PATH_OUTSIDE_WORKSPACE');
  await expectGymError(list({ depth: 11 }), 'INVALID_ARGUMENT', /'depth'/);
});
