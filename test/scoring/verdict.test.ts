import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestCaseResult } from '../../src/scoring/junit.ts';
import type { TestRun } from '../../src/scoring/runners.ts';
import { decide } from '../../src/scoring/verdict.ts';

function run(tests: [string, TestCaseResult['status']][], exec: { exitCode?: number | null; timedOut?: boolean } = {}): TestRun {
  return {
    command: 'pytest',
    tests: tests.map(([name, status]) => ({ name, status })),
    log: '',
    exec: {
      exitCode: exec.exitCode === undefined ? 0 : exec.exitCode,
      timedOut: exec.timedOut ?? false,
      stdout: '',
      stderr: '',
      truncated: { stdout: 0, stderr: 0 },
      totalBytes: { stdout: 0, stderr: 0 },
      durationMs: 10,
    },
  };
}
const NO_LISTS = { failToPass: [], passToPass: [] };

test('without lists: every test passing with exit 0 is resolved', () => {
  const v = decide(
    run([
      ['a', 'passed'],
      ['b', 'passed'],
    ]),
    NO_LISTS,
    [],
  );
  assert.equal(v.reward, 1);
  assert.equal(v.status, 'passed');
  assert.equal(v.failToPass, undefined);
  assert.deepEqual(v.notes, []);
});

test('without lists: one failed or errored test fails the task', () => {
  assert.equal(
    decide(
      run(
        [
          ['a', 'passed'],
          ['b', 'failed'],
        ],
        { exitCode: 1 },
      ),
      NO_LISTS,
      [],
    ).reward,
    0,
  );
  assert.equal(
    decide(
      run(
        [
          ['a', 'passed'],
          ['b', 'error'],
        ],
        { exitCode: 1 },
      ),
      NO_LISTS,
      [],
    ).status,
    'failed',
  );
});

test('without lists: skipped tests are fine, but at least one must pass', () => {
  assert.equal(
    decide(
      run([
        ['a', 'passed'],
        ['b', 'skipped'],
      ]),
      NO_LISTS,
      [],
    ).reward,
    1,
  );
  assert.equal(
    decide(
      run([
        ['a', 'skipped'],
        ['b', 'skipped'],
      ]),
      NO_LISTS,
      [],
    ).reward,
    0,
  );
});

test('without lists: a non-zero exit fails even when every reported test passed', () => {
  assert.equal(decide(run([['a', 'passed']], { exitCode: 1 }), NO_LISTS, []).reward, 0);
  assert.equal(decide(run([['a', 'passed']], { exitCode: null }), NO_LISTS, []).reward, 0);
});

test('no tests reported: failed, with a note', () => {
  const v = decide(run([], { exitCode: 2 }), NO_LISTS, []);
  assert.equal(v.reward, 0);
  assert.equal(v.status, 'failed');
  assert.ok(
    v.notes.some((n) => /no test results were reported/.test(n)),
    v.notes.join('; '),
  );
  assert.equal(decide(run([], { exitCode: 0 }), NO_LISTS, []).reward, 0);
});

test('a timeout fails the task and says so', () => {
  const v = decide(run([['a', 'passed']], { exitCode: null, timedOut: true }), NO_LISTS, []);
  assert.equal(v.reward, 0);
  assert.equal(v.timedOut, true);
  assert.ok(v.notes.some((n) => /time limit/.test(n)));
  assert.ok(!v.notes.some((n) => /no test results/.test(n)));
});

test('with lists: resolved iff every FAIL_TO_PASS and PASS_TO_PASS test passed; other tests do not matter', () => {
  const lists = { failToPass: ['f1', 'f2'], passToPass: ['p1'] };
  const v = decide(
    run(
      [
        ['f1', 'passed'],
        ['f2', 'passed'],
        ['p1', 'passed'],
        ['unlisted', 'failed'],
      ],
      { exitCode: 1 },
    ),
    lists,
    [],
  );
  assert.equal(v.reward, 1);
  assert.equal(v.status, 'passed');
  assert.deepEqual(v.failToPass, { passed: ['f1', 'f2'], failed: [] });
  assert.deepEqual(v.passToPass, { passed: ['p1'], failed: [] });
});

test('with lists: a failing F2P or a broken P2P test fails the task', () => {
  const lists = { failToPass: ['f1', 'f2'], passToPass: ['p1', 'p2'] };
  const f2p = decide(
    run([
      ['f1', 'passed'],
      ['f2', 'failed'],
      ['p1', 'passed'],
      ['p2', 'passed'],
    ]),
    lists,
    [],
  );
  assert.equal(f2p.reward, 0);
  assert.deepEqual(f2p.failToPass, { passed: ['f1'], failed: ['f2'] });
  const p2p = decide(
    run([
      ['f1', 'passed'],
      ['f2', 'passed'],
      ['p1', 'error'],
      ['p2', 'skipped'],
    ]),
    lists,
    [],
  );
  assert.equal(p2p.reward, 0);
  assert.deepEqual(p2p.passToPass, { passed: [], failed: ['p1', 'p2'] });
});

test('with lists: a listed test that did not run counts as failed', () => {
  const v = decide(
    run([
      ['f1', 'passed'],
      ['p1', 'passed'],
    ]),
    { failToPass: ['f1', 'f-missing'], passToPass: ['p1', 'p-missing'] },
    [],
  );
  assert.equal(v.reward, 0);
  assert.deepEqual(v.failToPass, { passed: ['f1'], failed: ['f-missing'] });
  assert.deepEqual(v.passToPass, { passed: ['p1'], failed: ['p-missing'] });
});

test('with lists and no results at all: failed', () => {
  const v = decide(run([], { exitCode: 2 }), { failToPass: ['f1'], passToPass: [] }, []);
  assert.equal(v.reward, 0);
  assert.deepEqual(v.failToPass, { passed: [], failed: ['f1'] });
});

test('notes given are kept, and not shared with the caller', () => {
  const notes = ['JDK 17 asked for, JDK 21 used'];
  const v = decide(run([], { timedOut: true, exitCode: null }), NO_LISTS, notes);
  assert.equal(v.notes[0], 'JDK 17 asked for, JDK 21 used');
  assert.ok(v.notes.length > 1);
  assert.deepEqual(notes, ['JDK 17 asked for, JDK 21 used']);
});

test(
  'passWhen exit-code: exit code 0 alone passes (all skipped passes, ' +
    'with a note); a failure, nothing collected or a timeout still fail',
  () => {
    const byExit = { ...NO_LISTS, passWhen: 'exit-code' as const };
    const skipped = decide(
      run([
        ['a', 'skipped'],
        ['b', 'skipped'],
      ]),
      byExit,
      [],
    );
    assert.equal(skipped.reward, 1);
    assert.ok(
      skipped.notes.some((n) => /no test passed \(all skipped\): passes by the exit code/.test(n)),
      skipped.notes.join('; '),
    );
    assert.equal(decide(run([['a', 'passed']]), byExit, []).notes.length, 0);
    assert.equal(decide(run([['a', 'failed']], { exitCode: 1 }), byExit, []).reward, 0);
    assert.equal(decide(run([], { exitCode: 5 }), byExit, []).reward, 0);
    assert.equal(decide(run([['a', 'passed']], { exitCode: null, timedOut: true }), byExit, []).reward, 0);
    assert.equal(decide(run([['a', 'skipped']]), { ...NO_LISTS, passWhen: 'tests' }, []).reward, 0);
  },
);
