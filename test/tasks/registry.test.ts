import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { SuiteRegistry } from '../../src/tasks/registry.ts';
import { publicTaskInfo } from '../../src/tasks/schema.ts';
import { expectGymError, tempDir } from '../helpers.ts';
import { BUILTIN_SUITES } from '../../bin/builtins.ts';
import { EXAMPLES_DIR } from '../../envs/examples/index.ts';

const EXAMPLE_IDS = [
  'inventory-discount-bug',
  'java-bracket-matcher',
  'median-edge-cases',
  'parse-duration',
  'roman-numerals',
  'semver-pinned',
];

function examples(): SuiteRegistry {
  const registry = new SuiteRegistry(BUILTIN_SUITES);
  registry.enable('examples');
  return registry;
}

/** A directory suite with one task per entry of `tasks` (task.json text plus workspace/hidden/solution files). */
async function writeSuite(root: string, tasks: Record<string, { json: unknown; files?: Record<string, string> }>): Promise<void> {
  for (const [id, t] of Object.entries(tasks)) {
    const dir = path.join(root, 'tasks', id);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'task.json'), typeof t.json === 'string' ? t.json : JSON.stringify(t.json, null, 2));
    for (const [rel, content] of Object.entries(t.files ?? {})) {
      await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await fs.writeFile(path.join(dir, rel), content);
    }
  }
}

const validJson = (id: string) => ({
  id,
  language: 'python',
  kind: 'function',
  prompt: 'do it',
  env: { kind: 'python' },
  tests: { hidden: { runner: { type: 'pytest', args: ['tests'] } } },
});

describe('the examples suite', () => {
  test('loads its six tasks', async () => {
    const tasks = await examples().tasks('examples');
    assert.deepEqual(
      tasks.map((t) => t.id),
      EXAMPLE_IDS,
    );
    for (const t of tasks) {
      assert.equal(t.suite, 'examples');
      assert.equal(t.workspace.type, 'dir');
      assert.ok(Object.keys(t.tests.hidden.files).length > 0, `${t.id} has no hidden test files`);
      assert.ok(t.solution?.files && Object.keys(t.solution.files).length > 0, `${t.id} has no solution`);
    }
  });

  test('reads hidden files, solutions and F2P/P2P lists from the task directories', async () => {
    const registry = examples();
    const inv = await registry.task('examples', 'inventory-discount-bug');
    assert.equal(inv.kind, 'repo-patch');
    assert.ok(inv.tests.failToPass.includes('tests/test_cart.py::test_receipt_with_coupon'));
    assert.ok(inv.tests.passToPass.includes('tests/test_inventory.py::test_invalid_quantities[True]'));
    assert.deepEqual(Object.keys(inv.tests.hidden.files), ['tests/test_cart.py']);
    assert.deepEqual(Object.keys(inv.solution!.files!), ['shop/cart.py']);
    const semver = await registry.task('examples', 'semver-pinned');
    assert.deepEqual(semver.env, { kind: 'python', version: '3.11', requirements: ['semver==2.13.0'] });
    const java = await registry.task('examples', 'java-bracket-matcher');
    assert.equal(java.env.kind, 'java');
    assert.equal(java.tests.hidden.runner.type, 'maven');
  });

  test('the public view of a task carries neither hidden tests nor the solution', async () => {
    const task = await examples().task('examples', 'roman-numerals');
    const info = JSON.stringify(publicTaskInfo(task));
    assert.doesNotMatch(info, /test_roman_hidden|solution|NotImplementedError/);
    assert.equal(publicTaskInfo(task).hasVisibleTests, true);
  });

  test('lists suites with task counts, and its private paths include the suite directory', async () => {
    const registry = examples();
    const list = await registry.list();
    assert.equal(list.length, 1);
    assert.equal(list[0]!.id, 'examples');
    assert.equal(list[0]!.taskCount, 6);
    assert.ok(registry.privatePaths().includes(path.resolve(EXAMPLES_DIR)));
  });

  test('unknown task: TASK_NOT_FOUND with near names', async () => {
    const registry = examples();
    await expectGymError(registry.task('examples', 'no-such-task'), 'TASK_NOT_FOUND', /no-such-task/);
    await expectGymError(registry.task('examples', 'roman'), 'TASK_NOT_FOUND', /did you mean roman-numerals/);
  });
});

describe('suite lookup errors', () => {
  test('a suite that is not enabled: SUITE_NOT_FOUND', async () => {
    await expectGymError(examples().tasks('nope'), 'SUITE_NOT_FOUND', /nope/);
    await expectGymError(new SuiteRegistry(BUILTIN_SUITES).tasks('examples'), 'SUITE_NOT_FOUND');
  });

  test('enabling an unknown suite without a path, or with a missing path: SUITE_NOT_FOUND', async () => {
    await expectGymError(
      Promise.resolve().then(() => new SuiteRegistry(BUILTIN_SUITES).enable('nope')),
      'SUITE_NOT_FOUND',
      /nope/,
    );
    await expectGymError(
      Promise.resolve().then(() => new SuiteRegistry(BUILTIN_SUITES).enable('nope=/no/such/benchgym/dir')),
      'SUITE_NOT_FOUND',
      /does not exist/,
    );
  });

  test('a directory without tasks/: SUITE_NOT_FOUND', async () => {
    const root = await tempDir('benchgym-suite-');
    try {
      const registry = new SuiteRegistry(BUILTIN_SUITES);
      registry.enable(`empty=${root}`);
      await expectGymError(registry.tasks('empty'), 'SUITE_NOT_FOUND', /tasks/);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});

describe('directory suites', () => {
  let root: string;
  before(async () => {
    root = await tempDir('benchgym-suite-');
  });
  after(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  test('a valid directory suite loads, with its files, under the id it was enabled as', async () => {
    const dir = path.join(root, 'good');
    await writeSuite(dir, {
      'my-task': {
        json: validJson('my-task'),
        files: { 'workspace/mod.py': 'x = 1\n', 'hidden/tests/test_h.py': 'def test(): pass\n', 'solution/mod.py': 'x = 2\n' },
      },
    });
    const registry = new SuiteRegistry(BUILTIN_SUITES);
    registry.enable(`mine=${dir}`);
    const [task] = await registry.tasks('mine');
    assert.equal(task!.id, 'my-task');
    assert.equal(task!.suite, 'mine');
    assert.deepEqual(task!.workspace, { type: 'dir', path: path.join(dir, 'tasks', 'my-task', 'workspace') });
    assert.deepEqual(task!.tests.hidden.files, { 'tests/test_h.py': 'def test(): pass\n' });
    assert.deepEqual(task!.solution, { files: { 'mod.py': 'x = 2\n' } });
    assert.equal(task!.env.kind === 'python' && task!.env.version, '3.11');
    assert.deepEqual(registry.privatePaths(), [dir]);
  });

  test('an invalid task.json: TASK_INVALID naming the file and the field', async () => {
    const dir = path.join(root, 'bad-field');
    await writeSuite(dir, { broken: { json: { ...validJson('broken'), language: 'cobol' } } });
    const registry = new SuiteRegistry(BUILTIN_SUITES);
    registry.enable(`bad=${dir}`);
    const err = await expectGymError(registry.tasks('bad'), 'TASK_INVALID');
    assert.ok(err.message.includes(path.join(dir, 'tasks', 'broken', 'task.json')), err.message);
    assert.match(err.message, /'language'/);
  });

  test('a missing nested field is named by its path', async () => {
    const dir = path.join(root, 'bad-nested');
    const json = validJson('nested');
    await writeSuite(dir, { nested: { json: { ...json, tests: { hidden: { runner: { type: 'script' } } } } } });
    const registry = new SuiteRegistry(BUILTIN_SUITES);
    registry.enable(`bad=${dir}`);
    const err = await expectGymError(registry.tasks('bad'), 'TASK_INVALID');
    assert.match(err.message, /'tests\.hidden\.runner\.command'/);
  });

  test('task.json that is not JSON: TASK_INVALID naming the file', async () => {
    const dir = path.join(root, 'bad-json');
    await writeSuite(dir, { garbled: { json: '{ "id": "garbled", ' } });
    const registry = new SuiteRegistry(BUILTIN_SUITES);
    registry.enable(`bad=${dir}`);
    const err = await expectGymError(registry.tasks('bad'), 'TASK_INVALID');
    assert.ok(err.message.includes(path.join(dir, 'tasks', 'garbled', 'task.json')), err.message);
  });

  test('an id that differs from its directory: TASK_INVALID', async () => {
    const dir = path.join(root, 'bad-id');
    await writeSuite(dir, { here: { json: validJson('elsewhere') } });
    const registry = new SuiteRegistry(BUILTIN_SUITES);
    registry.enable(`bad=${dir}`);
    await expectGymError(registry.tasks('bad'), 'TASK_INVALID', /'elsewhere' differs from its directory 'here'/);
  });

  test('a failed load is not cached: fixing the file fixes the suite', async () => {
    const dir = path.join(root, 'fixable');
    await writeSuite(dir, { t: { json: { ...validJson('t'), kind: 'nonsense' } } });
    const registry = new SuiteRegistry(BUILTIN_SUITES);
    registry.enable(`fix=${dir}`);
    await expectGymError(registry.tasks('fix'), 'TASK_INVALID', /'kind'/);
    await writeSuite(dir, { t: { json: validJson('t') } });
    assert.equal((await registry.tasks('fix')).length, 1);
  });
});
