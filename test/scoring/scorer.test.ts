import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FORCE_PASS_PLUGIN } from './force_pass.ts';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Gym } from '../../src/episode/gym.ts';
import { bubblewrapAvailable } from '../../src/sandbox/local/index.ts';
import { goldPatch } from '../../src/scoring/gold.ts';
import { EXAMPLES_DIR } from '../../envs/examples/index.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { seedOf } from '../../src/tasks/seed.ts';
import { expectGymError, makeGym, pythonTask, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
let inventory: Task;

/** A patch against a task's start state: files to write (content) or remove (null). */
async function patchFor(task: Task, changes: Record<string, string | null>): Promise<string> {
  const sb = await gym.sandboxes.create({ seed: seedOf(task) });
  try {
    await sb.commitBaseline();
    for (const [rel, content] of Object.entries(changes)) {
      if (content === null) await sb.remove(rel);
      else await sb.writeFile(rel, content);
    }
    return await sb.diff();
  } finally {
    await sb.destroy();
  }
}

/** A conftest that turns every test outcome into a pass. */
const FORCE_PASS_CONFTEST = FORCE_PASS_PLUGIN;

before(async () => {
  ({ gym, cleanup } = await makeGym());
  inventory = await gym.registry.task('examples', 'inventory-discount-bug');
});
after(() => cleanup());

describe('scoring the repo-patch example', () => {
  test('the gold patch scores 1 with every FAIL_TO_PASS and PASS_TO_PASS test passing', async () => {
    const patch = await goldPatch(inventory, gym.sandboxes);
    assert.match(patch, /^diff --git a\/shop\/cart\.py b\/shop\/cart\.py$/m);
    const v = await gym.score(inventory, patch);
    assert.equal(v.reward, 1);
    assert.equal(v.status, 'passed');
    assert.deepEqual(v.failToPass, { passed: inventory.tests.failToPass, failed: [] });
    assert.deepEqual(v.passToPass, { passed: inventory.tests.passToPass, failed: [] });
    assert.equal(v.error, undefined);
    assert.equal(v.taskId, 'inventory-discount-bug');
    assert.equal(v.suite, 'examples');
    assert.ok(v.logRef && existsSync(v.logRef), 'no scoring log');
    assert.match(await fs.readFile(v.logRef, 'utf8'), /apply \(git apply\)/);
  });

  test('the empty patch scores 0: the FAIL_TO_PASS tests fail, PASS_TO_PASS still pass', async () => {
    const v = await gym.score(inventory, '');
    assert.equal(v.reward, 0);
    assert.equal(v.status, 'failed');
    assert.deepEqual(v.failToPass, { passed: [], failed: inventory.tests.failToPass });
    assert.deepEqual(v.passToPass, { passed: inventory.tests.passToPass, failed: [] });
    assert.equal(v.error, undefined);
  });

  test('a patch that rewrites the test file gets it reset, with a note, and scores 0', async () => {
    const gutted = (
      await fs.readFile(path.join(EXAMPLES_DIR, 'tasks', 'inventory-discount-bug', 'hidden', 'tests', 'test_cart.py'), 'utf8')
    )
      .replace(/assert cart\.(tax|total)\(\) == Decimal\("[\d.]+"\)/g, 'pass')
      .replace(/"Tax \(8\.25%\) {17}2\.97",\n\s*"TOTAL {22}38\.97",/, '');
    const patch = await patchFor(inventory, { 'tests/test_cart.py': gutted });
    assert.match(patch, /tests\/test_cart\.py/);
    const v = await gym.score(inventory, patch);
    assert.equal(v.reward, 0);
    assert.ok(v.notes.includes('test file reset to its start state: tests/test_cart.py'), v.notes.join('; '));
    assert.ok(v.failToPass!.failed.includes('tests/test_cart.py::test_tax_is_charged_on_discounted_price'));
  });

  test('a conftest.py that would force every test to pass is removed, with a note, and scores 0', async () => {
    const patch = await patchFor(inventory, { 'conftest.py': FORCE_PASS_CONFTEST, 'tests/conftest.py': FORCE_PASS_CONFTEST });
    const v = await gym.score(inventory, patch);
    assert.equal(v.reward, 0);
    assert.ok(v.notes.includes('test file reset to its start state: conftest.py'), v.notes.join('; '));
    assert.ok(v.notes.includes('test file reset to its start state: tests/conftest.py'), v.notes.join('; '));
    assert.equal(v.failToPass!.failed.length, inventory.tests.failToPass.length);
  });

  test('the same conftest does force passing where it is not reset (the visible run), so the reset is what stops it', async () => {
    const id = await startExample(gym, 'inventory-discount-bug');
    await gym.callTool('create_file', { path: 'conftest.py', content: FORCE_PASS_CONFTEST }, testContext(), id);
    const visible = await gym.callTool('run_tests', {}, testContext(), id);
    assert.match(visible.text, /^Visible tests: \d+ passed, 0 failed, 0 errors/);
    const v = (await gym.callTool('submit', {}, testContext(), id)).data as { reward: number; notes: string[] };
    assert.equal(v.reward, 0);
    assert.ok(v.notes.includes('test file reset to its start state: conftest.py'));
  });

  test('a patch that does not apply scores 0 with a PATCH_APPLY_FAILED note', async () => {
    const patch = [
      'diff --git a/shop/cart.py b/shop/cart.py',
      '--- a/shop/cart.py',
      '+++ b/shop/cart.py',
      '@@ -1,3 +1,3 @@',
      '-this line is not in the file',
      '+nor is this one',
      ' and neither is this',
      '',
    ].join('\n');
    const v = await gym.score(inventory, patch);
    assert.equal(v.reward, 0);
    assert.equal(v.status, 'failed');
    assert.ok(
      v.notes.some((n) => n.startsWith('PATCH_APPLY_FAILED')),
      v.notes.join('; '),
    );
    assert.deepEqual(v.tests, []);
    assert.equal(v.error, undefined);
  });

  test('garbage instead of a patch also scores 0 with PATCH_APPLY_FAILED', async () => {
    const v = await gym.score(inventory, 'this is not a diff at all\n');
    assert.equal(v.reward, 0);
    assert.ok(
      v.notes.some((n) => n.startsWith('PATCH_APPLY_FAILED')),
      v.notes.join('; '),
    );
  });

  test('a cancelled scoring run throws CANCELLED instead of giving a verdict', async () => {
    await expectGymError(gym.score(inventory, '', { signal: AbortSignal.abort() }), 'CANCELLED');
  });
});

describe('ad-hoc tasks', () => {
  const ADD = { 'calc.py': 'def add(a, b):\n    return a - b\n' };
  const ADD_TESTS = {
    'tests/test_calc.py':
      'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n',
  };

  test('without lists: a fix passes, the start state fails', async () => {
    const task = pythonTask({ files: ADD, hidden: ADD_TESTS });
    const fixed = await gym.score(task, await patchFor(task, { 'calc.py': 'def add(a, b):\n    return a + b\n' }));
    assert.equal(fixed.reward, 1);
    assert.deepEqual(
      fixed.tests.map((t) => [t.name, t.status]),
      [
        ['tests/test_calc.py::test_add', 'passed'],
        ['tests/test_calc.py::test_zero', 'passed'],
      ],
    );
    const start = await gym.score(task, '');
    assert.equal(start.reward, 0);
    assert.deepEqual(
      start.tests.map((t) => t.status),
      ['failed', 'passed'],
    );
  });

  test('conftest.py is reset for every Python task, even one that lists no test files', async () => {
    const task = pythonTask({ files: ADD, hidden: ADD_TESTS });
    assert.deepEqual(task.tests.testFiles, []);
    const v = await gym.score(task, await patchFor(task, { 'conftest.py': FORCE_PASS_CONFTEST }));
    assert.equal(v.reward, 0);
    assert.ok(v.notes.includes('test file reset to its start state: conftest.py'), v.notes.join('; '));
  });

  test('a hidden test file the patch also wrote is replaced by the hidden version', async () => {
    const task = pythonTask({ files: ADD, hidden: ADD_TESTS });
    const v = await gym.score(task, await patchFor(task, { 'tests/test_calc.py': 'def test_add():\n    pass\n' }));
    assert.equal(v.reward, 0);
    assert.ok(v.tests.some((t) => t.name === 'tests/test_calc.py::test_add' && t.status === 'failed'));
  });

  test('code that breaks collection scores 0 (failed), never an error', async () => {
    const task = pythonTask({ files: ADD, hidden: ADD_TESTS });
    const v = await gym.score(task, await patchFor(task, { 'calc.py': 'def add(a, b:\n' }));
    assert.equal(v.reward, 0);
    assert.equal(v.status, 'failed');
    assert.equal(v.error, undefined);
  });

  test('a script runner decides by exit code', async () => {
    const task = pythonTask({
      files: ADD,
      tests: { hidden: { runner: { type: 'script', command: 'python -c "from calc import add; assert add(2, 3) == 5"' } } },
    });
    assert.equal((await gym.score(task, '')).reward, 0);
    const v = await gym.score(task, await patchFor(task, { 'calc.py': 'def add(a, b):\n    return a + b\n' }));
    assert.equal(v.reward, 1);
    assert.deepEqual(
      v.tests.map((t) => [t.name, t.status]),
      [['script', 'passed']],
    );
  });

  test('hidden tests that hit their time limit score 0 with a note', async () => {
    const task = pythonTask({
      files: ADD,
      tests: {
        hidden: {
          runner: { type: 'pytest', args: ['tests'] },
          timeoutMs: 1500,
          files: { 'tests/test_slow.py': 'import time\n\ndef test_slow():\n    time.sleep(60)\n' },
        },
      },
    });
    const started = Date.now();
    const v = await gym.score(task, '');
    assert.ok(Date.now() - started < 15_000);
    assert.equal(v.reward, 0);
    assert.equal(v.timedOut, true);
    assert.ok(v.notes.some((n) => /time limit/.test(n)));
  });

  test('a pytest.ini that makes pytest fail with a usage error scores 0 (failed): reset, and never an infrastructure error', async () => {
    const task = pythonTask({ files: ADD, hidden: ADD_TESTS });
    const v = await gym.score(
      task,
      await patchFor(task, { 'pytest.ini': '[pytest]\naddopts = --no-such-option\n', 'calc.py': 'def add(a, b):\n    return a + b\n' }),
    );
    assert.ok(v.notes.includes('test file reset to its start state: pytest.ini'), v.notes.join('; '));
    assert.equal(v.reward, 1, 'the reset config no longer breaks the run');
    const broken = pythonTask({
      files: ADD,
      tests: { hidden: { runner: { type: 'pytest', args: ['tests/does_not_exist.py'] }, files: ADD_TESTS } },
    });
    const u = await gym.score(broken, '');
    assert.equal(u.status, 'failed');
    assert.equal(u.reward, 0);
  });

  test('pytest reads its start-state configuration: addopts plugins added to pyproject.toml or setup.cfg do not run', async () => {
    const task = pythonTask({ files: { ...ADD, 'setup.cfg': '[metadata]\nname = calc\n' }, hidden: ADD_TESTS });
    const plugin = FORCE_PASS_CONFTEST;
    for (const config of <Record<string, string>[]>[
      { 'pyproject.toml': '[tool.pytest.ini_options]\naddopts = "-p evilplug"\n' },
      { 'setup.cfg': '[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -p evilplug\n' },
    ]) {
      const v = await gym.score(task, await patchFor(task, { ...config, 'evilplug.py': plugin }));
      assert.equal(v.reward, 0, `${Object.keys(config)[0]}: ${JSON.stringify(v.tests)}`);
      assert.ok(v.tests.some((t) => t.name === 'tests/test_calc.py::test_add' && t.status === 'failed'));
    }
    // The project's own pytest settings still apply.
    const withConfig = pythonTask({
      files: { ...ADD, 'pyproject.toml': '[tool.pytest.ini_options]\nmarkers = ["slow: slow tests"]\naddopts = "--strict-markers"\n' },
      hidden: {
        'tests/test_calc.py': 'import pytest\nfrom calc import add\n\n@pytest.mark.slow\ndef test_add():\n    assert add(2, 3) == 5\n',
      },
    });
    const fixed = await gym.score(withConfig, await patchFor(withConfig, { 'calc.py': 'def add(a, b):\n    return a + b\n' }));
    assert.equal(fixed.reward, 1, JSON.stringify(fixed.tests));
  });

  test("a src layout found through the configuration's own pythonpath (resolved from the project's root, as pytest does)", async () => {
    const task = pythonTask({
      files: {
        'src/calc/__init__.py': 'def add(a, b):\n    raise NotImplementedError\n',
        'pyproject.toml': '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
      },
      hidden: { 'tests/test_calc.py': 'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n' },
    });
    const fixed = await gym.score(task, await patchFor(task, { 'src/calc/__init__.py': 'def add(a, b):\n    return a + b\n' }));
    assert.equal(fixed.reward, 1, JSON.stringify({ tests: fixed.tests, notes: fixed.notes }));
    assert.equal((await gym.score(task, '')).reward, 0);
  });

  test('a pytest.py in the workspace cannot stand in for pytest and forge the report', async () => {
    const task = pythonTask({ files: ADD, hidden: ADD_TESTS });
    const forger = [
      'import sys',
      'report = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")][0]',
      'import os',
      'os.makedirs(os.path.dirname(report), exist_ok=True)',
      'open(report, "w").write(\'<testsuite><testcase classname="tests.test_calc" name="test_add" ' +
        'file="tests/test_calc.py"/><testcase classname="tests.test_calc" name="test_zero" file="tests/test_calc.py"/></testsuite>\')',
      'sys.exit(0)',
      '',
    ].join('\n');
    const v = await gym.score(task, await patchFor(task, { 'pytest.py': forger }));
    assert.equal(v.reward, 0, JSON.stringify(v.tests));
    assert.ok(v.tests.some((t) => t.name === 'tests/test_calc.py::test_add' && t.status === 'failed'));
  });
});

describe('environments that cannot be had are errors, never wrong answers', () => {
  test('a Python version that does not exist: status error, ENV_UNAVAILABLE', async () => {
    const task = pythonTask({ files: { 'a.py': 'x = 1\n' }, env: { kind: 'python', version: '3.2' } });
    const v = await gym.score(task, '');
    assert.equal(v.status, 'error');
    assert.notEqual(v.status, 'failed');
    assert.equal(v.reward, 0);
    assert.equal(v.error?.code, 'ENV_UNAVAILABLE');
    assert.match(v.error!.message, /3\.2/);
  });

  test('a requirement with no distribution for this Python: status error, ENV_UNAVAILABLE', async () => {
    const task = pythonTask({
      files: { 'a.py': 'x = 1\n' },
      env: { kind: 'python', version: '3.11', requirements: ['benchgym-no-such-package==0.0.1'] },
    });
    const v = await gym.score(task, '');
    assert.equal(v.status, 'error');
    assert.equal(v.error?.code, 'ENV_UNAVAILABLE');
    assert.match(v.error!.message, /benchgym-no-such-package/);
  });

  test('requirements that cannot be installed together: status error, ENV_BUILD_FAILED', async () => {
    const task = pythonTask({
      files: { 'a.py': 'x = 1\n' },
      env: { kind: 'python', version: '3.11', requirements: ['semver==2.13.0', 'semver==3.0.0'] },
    });
    const v = await gym.score(task, '');
    assert.equal(v.status, 'error');
    assert.equal(v.error?.code, 'ENV_BUILD_FAILED');
    assert.match(v.error!.message, /semver/);
  });
});

describe('hidden tests stay hidden', () => {
  test('the hidden test files are not in the episode workspace', async () => {
    const id = await startExample(gym, 'roman-numerals');
    const call = (name: string, args: Record<string, unknown>) => gym.callTool(name, args, testContext(), id);
    assert.deepEqual((await call('find_files', { pattern: '*hidden*' })).data.files, []);
    assert.equal((await call('search', { query: 'test_roman_hidden' })).data.total, 0);
    const found = await call('run_command', { command: 'find . -name "*hidden*" | wc -l' });
    assert.match(found.text, /\n0$/);
    const start = (await call('list_dir', { depth: 5 })).data.entries as { path: string }[];
    assert.deepEqual(start.map((e) => e.path).sort(), ['roman.py', 'tests', 'tests/test_roman.py']);
  });

  test('a hidden file that shares its name with a visible one: the workspace has the visible version', async () => {
    const id = await startExample(gym, 'inventory-discount-bug');
    const visible = (await gym.episode(id).sandbox.readFile('tests/test_cart.py')).toString();
    assert.equal(
      visible,
      await fs.readFile(path.join(EXAMPLES_DIR, 'tasks', 'inventory-discount-bug', 'workspace', 'tests', 'test_cart.py'), 'utf8'),
    );
    assert.doesNotMatch(visible, /test_tax_is_charged_on_discounted_price/);
  });

  test("under bubblewrap, commands cannot read the suite's hidden tests and solutions on the host", async (t) => {
    if (!(await bubblewrapAvailable())) return t.skip('bubblewrap is not usable on this machine');
    const id = await startExample(gym, 'roman-numerals');
    const taskDir = path.join(EXAMPLES_DIR, 'tasks', 'roman-numerals');
    const hidden = path.join(taskDir, 'hidden', 'tests', 'test_roman_hidden.py');
    const solution = path.join(taskDir, 'solution', 'roman.py');
    assert.ok(existsSync(hidden) && existsSync(solution));
    const control = await fs.readFile(hidden, 'utf8');
    assert.match(control, /def test_/);
    const r = await gym.callTool(
      'run_command',
      { command: `cat ${hidden} ${solution}; ls -A ${EXAMPLES_DIR} | wc -l; ls -A ${path.join(gym.dataDir, 'trajectories')} | wc -l` },
      testContext(),
      id,
    );
    assert.doesNotMatch(r.text, /def test_|def to_roman/);
    assert.match(r.text, /test_roman_hidden\.py: No such file or directory/);
    assert.match(r.text, /solution\/roman\.py: No such file or directory/);
    assert.match(r.text, /^\[exit code 0, [\d.]+ s\]\n0\n0\n/);
  });
});
