import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exampleEpisode, expectGymError } from '../helpers.ts';

const episode = exampleEpisode('roman-numerals');
const call = episode.call;

test('before any test run: NO_TEST_RUN', async () => {
  await expectGymError(call('view_error_log'), 'NO_TEST_RUN', /run_tests/);
});

test('after a failing run: the failing tests with their tracebacks, then the log', async () => {
  await call('run_tests', { tests: ['tests/test_roman.py::test_out_of_range_raises'] });
  const r = await call('view_error_log');
  assert.match(r.text, /^Last test run at .*pytest.*tests\/test_roman\.py::test_out_of_range_raises$/m);
  assert.match(r.text, /^Failing tests \(1\):$/m);
  assert.match(r.text, /^=== FAILED tests\/test_roman\.py::test_out_of_range_raises$/m);
  assert.match(r.text, /^>\s+to_roman\(0\)$/m);
  assert.match(r.text, /^roman\.py:22: NotImplementedError$/m);
  assert.match(r.text, /--- full log, page 1 of 1 ---/);
  assert.match(r.text, /1 failed/);
  const data = r.data as { failures: { test: string; status: string }[]; pages: number };
  assert.deepEqual(
    data.failures.map((f) => [f.test, f.status]),
    [['tests/test_roman.py::test_out_of_range_raises', 'failed']],
  );
});

test('a long log is paged; page 2 has only the log; a page past the end is an invalid argument', async () => {
  await call('create_file', {
    path: 'tests/test_noisy.py',
    content: 'def test_noisy():\n    print("\\n".join(f"noise {i}" for i in range(500)))\n    assert 1 == 2\n',
  });
  await call('run_tests', { tests: ['tests/test_noisy.py'] });
  const first = await call('view_error_log');
  const pages = (first.data as { pages: number }).pages;
  assert.ok(pages >= 3, `${pages} pages`);
  assert.match(first.text, /=== FAILED tests\/test_noisy\.py::test_noisy/);
  assert.match(first.text, /\[more: view_error_log with page=2\]/);
  const second = await call('view_error_log', { page: 2 });
  assert.match(second.text, new RegExp(`^\\n?--- full log, page 2 of ${pages} ---`));
  assert.doesNotMatch(second.text, /Failing tests/);
  assert.ok(second.text.split('\n').length <= 203);
  assert.match(second.text, /noise \d+/);
  const last = await call('view_error_log', { page: pages });
  assert.doesNotMatch(last.text, /\[more:/);
  await expectGymError(call('view_error_log', { page: pages + 1 }), 'INVALID_ARGUMENT', /'page'/);
  await expectGymError(call('view_error_log', { page: 0 }), 'INVALID_ARGUMENT', /'page'/);
});

test('code that does not import: the error is found in the log', async () => {
  await call('create_file', { path: 'roman.py', content: 'def to_roman(:\n    pass\n', overwrite: true });
  await call('run_tests', { tests: ['tests/test_roman.py'] });
  const r = await call('view_error_log');
  assert.match(r.text, /SyntaxError/);
});

test('after a passing run there are no failures', async () => {
  await call('create_file', { path: 'tests/test_ok.py', content: 'def test_ok():\n    assert True\n' });
  await call('run_tests', { tests: ['tests/test_ok.py'] });
  const r = await call('view_error_log');
  assert.match(r.text, /No failures in the last run\./);
});
