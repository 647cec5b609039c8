import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

type Row = { name: string; status: string; message?: string };
let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
const runTests = async (args: Record<string, unknown> = {}) => {
  const r = await gym.callTool('run_tests', args, testContext(), id);
  return { ...r, tests: (r.data as { tests: Row[] }).tests, counts: (r.data as { counts: Record<string, number> }).counts };
};

const VISIBLE = [
  'tests/test_roman.py::test_to_roman[1-I]',
  'tests/test_roman.py::test_to_roman[4-IV]',
  'tests/test_roman.py::test_to_roman[9-IX]',
  'tests/test_roman.py::test_to_roman[14-XIV]',
  'tests/test_roman.py::test_to_roman[40-XL]',
  'tests/test_roman.py::test_to_roman[1994-MCMXCIV]',
  'tests/test_roman.py::test_from_roman[III-3]',
  'tests/test_roman.py::test_from_roman[LVIII-58]',
  'tests/test_roman.py::test_from_roman[XC-90]',
  'tests/test_roman.py::test_from_roman[MMXXIV-2024]',
  'tests/test_roman.py::test_out_of_range_raises',
];

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'roman-numerals');
});
after(() => cleanup());

test('the start state fails every visible test, each reported by its pytest node id', async () => {
  const r = await runTests();
  assert.deepEqual(r.tests.map((t) => t.name).sort(), [...VISIBLE].sort());
  assert.ok(r.tests.every((t) => t.status === 'failed'));
  assert.deepEqual(r.counts, { passed: 0, failed: 11, error: 0, skipped: 0 });
  assert.match(r.text, /^Visible tests: 0 passed, 11 failed, 0 errors, 0 skipped \(exit code 1, /);
  assert.match(r.text, /^FAILED {2}tests\/test_roman\.py::test_out_of_range_raises — NotImplementedError$/m);
  assert.match(r.text, /view_error_log/);
  assert.doesNotMatch(r.text, /hidden/);
});

test('a partial solution gives per-test statuses', async () => {
  // to_roman works for 1..3; from_roman still raises.
  await gym.callTool(
    'edit_file',
    {
      path: 'roman.py',
      old_str: '    raise NotImplementedError\n\n\ndef from_roman',
      new_str: '    if not 1 <= n <= 3999:\n        raise ValueError(n)\n    return "I" * n\n\n\ndef from_roman',
    },
    testContext(),
    id,
  );
  const r = await runTests();
  const status = Object.fromEntries(r.tests.map((t) => [t.name, t.status]));
  assert.equal(status['tests/test_roman.py::test_to_roman[1-I]'], 'passed');
  assert.equal(status['tests/test_roman.py::test_out_of_range_raises'], 'passed');
  assert.equal(status['tests/test_roman.py::test_to_roman[4-IV]'], 'failed');
  assert.equal(status['tests/test_roman.py::test_from_roman[III-3]'], 'failed');
  assert.deepEqual(r.counts, { passed: 2, failed: 9, error: 0, skipped: 0 });
  assert.match(r.tests.find((t) => t.name.endsWith('[4-IV]'))!.message!, /AssertionError/);
});

test('runs only the tests asked for', async () => {
  const r = await runTests({ tests: ['tests/test_roman.py::test_out_of_range_raises', 'tests/test_roman.py::test_from_roman'] });
  assert.deepEqual(r.tests.map((t) => t.name).sort(), [
    'tests/test_roman.py::test_from_roman[III-3]',
    'tests/test_roman.py::test_from_roman[LVIII-58]',
    'tests/test_roman.py::test_from_roman[MMXXIV-2024]',
    'tests/test_roman.py::test_from_roman[XC-90]',
    'tests/test_roman.py::test_out_of_range_raises',
  ]);
});

test('skipped tests and errors are reported as such', async () => {
  await gym.callTool(
    'create_file',
    {
      path: 'tests/test_extra.py',
      content:
        'import pytest\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError("fixture blew ' +
        'up")\n\ndef test_skip():\n    pytest.skip("not today")\n\ndef test_err(broken):\n    pass\n',
    },
    testContext(),
    id,
  );
  const r = await runTests({ tests: ['tests/test_extra.py'] });
  assert.deepEqual(Object.fromEntries(r.tests.map((t) => [t.name, t.status])), {
    'tests/test_extra.py::test_skip': 'skipped',
    'tests/test_extra.py::test_err': 'error',
  });
  assert.match(r.text, /^ERROR {3}tests\/test_extra\.py::test_err/m);
  await gym.callTool('undo_edit', { path: 'tests/test_extra.py' }, testContext(), id);
});

test('code that does not import is reported with no results and a pointer to the log', async () => {
  await gym.episode(id).sandbox.writeFile('roman.py', 'def to_roman(:\n');
  const r = await runTests();
  assert.ok(r.counts.passed === 0);
  assert.ok(r.tests.length === 0 || r.tests.every((t) => t.status === 'error'), JSON.stringify(r.tests));
  assert.match(r.text, /view_error_log/);
});

test('the reference solution passes every visible test', async () => {
  const task = gym.episode(id).task;
  await gym.callTool('create_file', { path: 'roman.py', content: task.solution!.files!['roman.py'], overwrite: true }, testContext(), id);
  const r = await runTests();
  assert.deepEqual(r.counts, { passed: 11, failed: 0, error: 0, skipped: 0 });
  assert.match(r.text, /exit code 0/);
  assert.doesNotMatch(r.text, /view_error_log/);
});

test('the test reports do not stay in the workspace or the diff', async () => {
  const diff = await gym.callTool('get_diff', {}, testContext(), id);
  assert.deepEqual((diff.data as { files: string[] }).files, ['roman.py']);
  assert.equal(await gym.episode(id).sandbox.stat('.benchgym-reports'), null);
});

test('the test names argument is validated', async () => {
  await expectGymError(runTests({ tests: [''] }), 'INVALID_ARGUMENT', /'tests\.0'/);
});
