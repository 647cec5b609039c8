/**
 * The replay's causes: what a verdict tells by itself (its note codes, its failure), what the
 * suite knows (tasks apart, known differences), and how `benchgym score` reports them: each
 * disagreement under its cause, agreement as measured and over sound published verdicts, the
 * tasks counted apart (never compared), the same in --json.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { ReplayAdapter, ScoredSubmission } from '../../src/replay/adapter.ts';
import { judgeSubmission, publishedIsSound, verdictCause } from '../../src/replay/causes.ts';
import { replay, type ReplayScore } from '../../src/replay/driver.ts';
import type { GenericSummary, SubmissionResult } from '../../src/replay/generic.ts';
import { NOTE_CODES } from '../../src/scoring/note_codes.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { pythonTask, tempDir } from '../helpers.ts';

const task = (id: string): Task => pythonTask({ id, suite: 'fake', files: { 'a.py': '' } });

function verdict(status: Verdict['status'], extra: Partial<Verdict> = {}): Verdict {
  return { taskId: 't', suite: 'fake', reward: status === 'passed' ? 1 : 0, status, tests: [], notes: [], durationMs: 1, ...extra };
}

function scored(ours: ScoredSubmission['ours'], published: 'passed' | 'failed' | undefined, v?: Verdict, reason = ''): ScoredSubmission {
  const comparable = published !== undefined && (ours === 'passed' || ours === 'failed');
  return {
    submission: { taskId: 't', sample: 0, patch: 'p', line: 1, ...(published ? { published } : {}) },
    row: null,
    task: task('t'),
    ours,
    ...(v ? { verdict: v } : {}),
    ...(comparable ? { agree: ours === published } : {}),
    reason,
    durationMs: 1,
  };
}

describe('what a verdict tells', () => {
  test('note codes: a patch that did not apply, a test file of the candidate that does not compile, tests that cannot fail', () => {
    const notApplied = verdictCause(
      scored('failed', 'passed', verdict('failed', { notes: [`${NOTE_CODES.patchNotApplied}: the patch does not apply`] })),
      '',
    );
    assert.deepEqual(notApplied, { kind: 'patch-not-applied', detail: 'PATCH_APPLY_FAILED: the patch does not apply' });
    const compile = verdictCause(
      scored('failed', 'passed', verdict('failed', { notes: ['TEST_COMPILE_FAILED: src/test/java/a/NewTest.java: cannot find symbol'] })),
      '',
    );
    assert.equal(compile?.kind, 'test-compile-failed');
    // Tests that cannot fail make the published verdict unsound even where both sides agree.
    const cannot = verdictCause(
      scored('passed', 'passed', verdict('passed', { notes: ['CANNOT_FAIL: test_a passes at the start state'] })),
      '',
    );
    assert.deepEqual(cannot, { kind: 'cannot-fail', detail: 'CANNOT_FAIL: test_a passes at the start state' });
    assert.equal(publishedIsSound(cannot), false);
    // A note naming the code in its text, not at its start, is no code.
    assert.equal(verdictCause(scored('failed', 'passed', verdict('failed', { notes: ['see PATCH_APPLY_FAILED above'] })), ''), undefined);
  });

  test('environment differences, only where ours failed and the published run passed', () => {
    const net = verdictCause(
      scored('failed', 'passed', verdict('failed')),
      'requests.exceptions.ConnectionError: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution',
    );
    assert.equal(net?.kind, 'environment');
    assert.equal(net?.name, 'no-network');
    const mod = verdictCause(scored('failed', 'passed', verdict('failed')), "ModuleNotFoundError: No module named 'neo4j'");
    assert.deepEqual([mod?.kind, mod?.name], ['environment', 'missing-module']);
    assert.match(mod!.detail, /'neo4j'/);
    const slow = verdictCause(scored('failed', 'passed', verdict('failed', { timedOut: true })), 'TIMEOUT: 30 s');
    assert.deepEqual([slow?.kind, slow?.name], ['environment', 'time-limit']);
    // The other way round (ours passed) a missing module says nothing; nor does an agreement.
    assert.equal(verdictCause(scored('passed', 'failed', verdict('passed')), "ModuleNotFoundError: No module named 'x'"), undefined);
    assert.equal(verdictCause(scored('failed', 'failed', verdict('failed')), "ModuleNotFoundError: No module named 'x'"), undefined);
  });

  test(
    "judging: counted apart (never compared), the suite's cause first, " +
      'unexplained last; an agreement keeps only a cause that makes it unsound',
    () => {
      const apart = judgeSubmission(scored('failed', 'passed', verdict('failed')), {
        apart: () => ({ standing: 'invalid', reason: 'reads a file in no commit' }),
      });
      assert.equal(apart.agree, undefined);
      assert.deepEqual(apart.apart, { standing: 'invalid', reason: 'reads a file in no commit' });
      assert.equal(apart.cause, undefined);
      const unavailable = judgeSubmission(scored('unavailable', 'passed', undefined, 'ENV_UNAVAILABLE: no image'));
      assert.deepEqual(unavailable.apart, { standing: 'unavailable', reason: 'ENV_UNAVAILABLE: no image' });
      const known = { kind: 'known-difference' as const, name: 'shared-cwd', detail: 'the harness shared a folder' };
      const suite = judgeSubmission(scored('passed', 'failed', verdict('passed', { notes: [`${NOTE_CODES.patchNotApplied}: x`] })), {
        explain: () => known,
      });
      assert.deepEqual(suite.cause, known, "the suite's cause comes before the verdict's");
      assert.equal(suite.agree, false);
      const plain = judgeSubmission(scored('failed', 'passed', verdict('failed'), 'test_x: assert 1 == 2'));
      assert.deepEqual(plain.cause, { kind: 'unexplained', detail: 'test_x: assert 1 == 2' });
      const agreeing = judgeSubmission(scored('failed', 'failed', verdict('failed'), "ModuleNotFoundError: No module named 'x'"), {
        explain: () => ({ kind: 'environment', detail: 'x' }),
      });
      assert.equal(agreeing.cause, undefined, 'an agreement needs no explaining');
      const unsound = judgeSubmission(scored('passed', 'passed', verdict('passed')), {
        explain: () => ({ kind: 'cannot-fail', detail: 'the stub passes' }),
      });
      assert.equal(unsound.cause?.kind, 'cannot-fail');
    },
  );
});

const Row = z.object({ task: z.string(), code: z.array(z.string()), passed: z.array(z.boolean()) });
type Row = z.infer<typeof Row>;

describe('benchgym score reports its own disagreements', () => {
  let dir: string;
  before(async () => {
    dir = await tempDir('benchgym-causes-');
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  /** A suite's replay knowing one invalid task, one task whose tests cannot fail, and one known difference of the original harness. */
  const adapter: ReplayAdapter<Row> = {
    rowFormat: 'task, code[], passed[]',
    usage: '  benchgym score --suite fake ...',
    row: Row,
    taskOf: (row) => row.task,
    submissions: (row, t, line) =>
      row.code.map((code, sample) => ({
        taskId: t.id,
        sample,
        patch: code,
        line,
        published: row.passed[sample] ? ('passed' as const) : ('failed' as const),
      })),
    apart: (t) => (t.id === 'invalid' ? { standing: 'invalid', reason: 'its test reads plugin.spec, in no commit' } : undefined),
    explain: (s) => {
      if (s.task.id === 'shared' && s.submission.published === 'failed' && s.ours === 'passed')
        return { kind: 'known-difference', name: 'shared-log', detail: 'the harness ran every sample in one folder' };
      if (s.task.id === 'weak') return { kind: 'cannot-fail', detail: 'the stub passes' };
      return undefined;
    },
  };
  const TASKS = ['plain', 'invalid', 'shared', 'weak', 'apply', 'compile', 'net'].map(task);
  /** Scores by what the patch says. */
  const score: ReplayScore = async (t, patch) => {
    if (patch === 'pass') return { ...verdict('passed', { tests: [{ name: 't', status: 'passed' }] }), taskId: t.id };
    if (patch === 'noapply')
      return {
        ...verdict('failed', { notes: [`${NOTE_CODES.patchNotApplied}: the patch does not apply to the start state`] }),
        taskId: t.id,
      };
    if (patch === 'nocompile')
      return {
        ...verdict('failed', { notes: [`${NOTE_CODES.testCompileFailed}: src/test/java/a/ATest.java does not compile`] }),
        taskId: t.id,
      };
    if (patch === 'net')
      return {
        ...verdict('failed', {
          tests: [
            {
              name: 'test_fetch',
              status: 'failed',
              message: 'urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>',
            },
          ],
        }),
        taskId: t.id,
      };
    return { ...verdict('failed', { tests: [{ name: 'test_x', status: 'failed', message: 'assert 1 == 2' }] }), taskId: t.id };
  };

  test('each disagreement under its cause, both agreements, the tasks apart; --json carries the same', async () => {
    const rows: Row[] = [
      { task: 'plain', code: ['pass', 'fail', 'fail'], passed: [true, true, false] },
      { task: 'invalid', code: ['fail', 'fail'], passed: [true, false] },
      { task: 'shared', code: ['pass', 'pass', 'fail'], passed: [false, false, false] },
      { task: 'weak', code: ['pass', 'pass'], passed: [true, false] },
      { task: 'apply', code: ['noapply'], passed: [true] },
      { task: 'compile', code: ['nocompile'], passed: [true] },
      { task: 'net', code: ['net'], passed: [true] },
    ];
    const predictions = path.join(dir, 'p.jsonl');
    await fs.writeFile(predictions, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const report = await replay(adapter, {
      suite: 'fake',
      tasks: TASKS,
      predictions,
      options: undefined,
      scoring: 'faithful',
      score,
      concurrency: 2,
    });
    const { results, summary } = report.json as { results: SubmissionResult[]; summary: GenericSummary };
    const f = summary.agreementFigures;
    // Compared: 13 samples less the 2 of the invalid task; agreed: plain #0 #2, shared #2, weak #0.
    assert.deepEqual([f.compared, f.agreed], [11, 4]);
    // Sound: less the 2 known differences (shared #0 #1) and the 2 samples of the task that cannot fail.
    assert.deepEqual([f.soundCompared, f.soundAgreed], [7, 3]);
    assert.deepEqual(f.unsound, { 'known-difference': 2, 'cannot-fail': 2 });
    assert.deepEqual(f.causes, {
      'known-difference': 2,
      'cannot-fail': 1,
      'patch-not-applied': 1,
      'test-compile-failed': 1,
      environment: 1,
      unexplained: 1,
    });
    assert.deepEqual(f.apartTasks, [
      {
        taskId: 'invalid',
        standing: 'invalid',
        reason: 'its test reads plugin.spec, in no commit',
        samples: 2,
        ourPassed: 0,
        theirPassed: 1,
      },
    ]);
    // The invalid task's samples are in no rate: 5 passed of the 11 others.
    assert.deepEqual([summary.passed, summary.failed, summary.apart], [5, 6, 2]);
    assert.equal(results.find((r) => r.taskId === 'invalid')!.agree, undefined);
    assert.equal(results.find((r) => r.taskId === 'net')!.cause?.name, 'no-network');

    const text = report.text;
    assert.match(text, /^fake: 13 submissions: 5\/11 passed \(45\.5%\); 6 failed, 0 unavailable here, 2 counted apart; scoring faithful$/m);
    assert.match(
      text,
      new RegExp(
        String.raw`^agreement with the published verdicts: 4\/11 \(36\.4%\) as measured; 3\/7 \(42\.9%\) over the 7 whose ` +
          String.raw`published verdict is sound \(4 left out: known difference of the original harness 2, tests that cannot ` +
          String.raw`fail \(the start state passes\) 2\)$`,
        'm',
      ),
    );
    assert.match(
      text,
      new RegExp(
        String.raw`^disagreements: 7, by cause: known difference of the original harness 2, tests that cannot fail .* 1, ` +
          String.raw`patch did not apply 1, a test file of the candidate's did not compile 1, environment difference 1, not ` +
          String.raw`explained 1$`,
        'm',
      ),
    );
    assert.match(
      text,
      new RegExp(
        String.raw`^ known difference of the original harness: shared-log \(2\): the harness ran every sample in one ` +
          String.raw`folder\n {2}DISAGREE shared #0 \(line 3\): ours passed, theirs failed: 1 passed\n {2}DISAGREE shared #1 `,
        'm',
      ),
    );
    assert.match(
      text,
      /^ patch did not apply \(1\): PATCH_APPLY_FAILED: the patch does not apply to the start state\n {2}DISAGREE apply #0 /m,
    );
    assert.match(
      text,
      /^ a test file of the candidate's did not compile \(1\): TEST_COMPILE_FAILED: src\/test\/java\/a\/ATest\.java does not compile$/m,
    );
    assert.match(text, /^ environment difference: no-network \(1\): the sandbox has no network/m);
    assert.match(text, /^ not explained \(1\)\n {2}DISAGREE plain #1 \(line 1\): ours failed, theirs passed: test_x: assert 1 == 2$/m);
    assert.match(
      text,
      new RegExp(
        String.raw`^counted apart, never compared \(the task is invalid or unavailable here\): 2 samples of 1 task\n ` +
          String.raw`{2}INVALID HERE invalid \(2 samples; ours 0 passed, published 1 passed\): its test reads plugin\.spec, ` +
          String.raw`in no commit$`,
        'm',
      ),
    );
    assert.doesNotMatch(text, /DISAGREE invalid/, 'a task invalid here is never a disagreement');
  });
});
