/**
 * What the GitChameleon replay knows, on hand-made rows scored by a stand-in scorer: problems the
 * data makes invalid are counted apart, a published failure at the harness's own time limit is
 * named as such where the same answer passes here, problems whose tests the starter passes leave
 * the agreement over sound verdicts, and `benchgym score`'s report says each.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { explainPrediction, problemApart } from '../../../envs/gitchameleon/known_differences.ts';
import { replayAdapter, replayPredictions, summarize, type Prediction } from '../../../envs/gitchameleon/replay.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import type { Task } from '../../../src/tasks/schema.ts';

const task = (id: string, form: 'v1' | 'v2'): Task =>
  ({
    id,
    suite: 'gitchameleon',
    metadata: { form },
    workspace: { type: 'files', files: { [`sample_${id}.py`]: 'def f():\n    return 0\n' } },
  }) as unknown as Task;

/** A stand-in scorer: an answer passes when it returns 1. */
async function score(t: Task, patch: string): Promise<Verdict> {
  const passed = /\+.*return 1/.test(patch);
  return {
    taskId: t.id,
    suite: 'gitchameleon',
    reward: passed ? 1 : 0,
    status: passed ? 'passed' : 'failed',
    tests: [],
    notes: [],
    durationMs: 1,
  } as Verdict;
}

const TIMEOUT = 'Timeout: Command timed out after 120 seconds';
const prediction = (taskId: string, line: number, answer: string, passed: boolean, publishedOutput?: string): Prediction =>
  ({ taskId, line, answer: '```python\n' + answer + '\n```', passed, ...(publishedOutput ? { publishedOutput } : {}) }) as Prediction;

describe('GitChameleon: what the replay knows of the data and the published run', () => {
  test("the data's invalid problems are apart, by form; weak tests and the harness's time limit are causes", () => {
    assert.equal(problemApart(task('42', 'v1'))?.standing, 'invalid');
    // The same id in the other form is another problem.
    assert.equal(problemApart(task('42', 'v2')), undefined);
    assert.equal(problemApart(task('39', 'v2')), undefined);
    const s = (id: string, ours: string, published: 'passed' | 'failed', output?: string) =>
      ({ task: task(id, 'v2'), ours, submission: { published }, row: { publishedOutput: output } }) as Parameters<
        typeof explainPrediction
      >[0];
    assert.equal(explainPrediction(s('312', 'passed', 'failed', TIMEOUT))?.name, 'published-time-limit');
    // Ours failed too, or theirs failed for another reason: the time limit explains nothing.
    assert.equal(explainPrediction(s('312', 'failed', 'failed', TIMEOUT)), undefined);
    assert.equal(explainPrediction(s('312', 'passed', 'failed', 'AssertionError')), undefined);
    assert.equal(explainPrediction(s('39', 'passed', 'passed'))?.kind, 'cannot-fail');
  });

  test("score's report: each disagreement under its cause, both agreements, the problems counted apart", async () => {
    const tasks = new Map([
      ['312', task('312', 'v2')],
      ['39', task('39', 'v2')],
      ['7', task('7', 'v2')],
    ]);
    const predictions = [
      prediction('312', 1, 'def f():\n    return 1', false, TIMEOUT),
      prediction('39', 2, 'def f():\n    return 1', true),
      prediction('7', 3, 'def f():\n    return 2', true),
      prediction('7', 4, 'def f():\n    return 1', true),
    ];
    const results = await replayPredictions(tasks, predictions, score, { mode: 'extract', concurrency: 1 });
    const s = summarize(results);
    // The harness's time limit is an environment difference (its row stays sound); 39's weak tests leave it out.
    assert.deepEqual(
      [s.agreementFigures.compared, s.agreementFigures.agreed, s.agreementFigures.soundCompared, s.agreementFigures.soundAgreed],
      [4, 2, 3, 1],
    );
    const report = await replayAdapter.report!(results, {
      suite: 'gitchameleon',
      predictions: 'p.jsonl',
      options: { mode: 'extract' },
      scoring: 'faithful',
      excludeErrors: false,
    } as never);
    assert.match(
      report.text,
      /agreement with the published verdicts: 2\/4 \(50\.0%\) as measured; 1\/3 \(33\.3%\) over the 3 whose published verdict is sound/,
    );
    assert.match(
      report.text,
      new RegExp(
        String.raw`environment difference: published-time-limit \(1\): the published run hit the harness's time limit ` +
          String.raw`\(Timeout: Command timed out after 120 seconds\)`,
      ),
    );
    assert.match(report.text, /DISAGREE 312 \(line 1\): ours passed, theirs failed/);
    assert.match(report.text, /not explained \(1\)\n {2}DISAGREE 7 \(line 3\): ours failed, theirs passed/);
    const json = report.json as { summary: { agreementFigures: { causes: Record<string, number> } } };
    assert.deepEqual(json.summary.agreementFigures.causes, { environment: 1, unexplained: 1 });
  });

  test('rows of a problem invalid here are scored but counted apart, never compared', async () => {
    const results = await replayPredictions(
      new Map([['42', task('42', 'v1')]]),
      [prediction('42', 1, 'def f():\n    return 0', true)],
      score,
      { mode: 'extract', concurrency: 1 },
    );
    assert.equal(results[0]!.agree, undefined);
    const s = summarize(results);
    assert.deepEqual([s.compared, s.apart, s.failed, s.agreementFigures.apart], [0, 1, 0, 1]);
    const report = await replayAdapter.report!(results, {
      suite: 'gitchameleon',
      predictions: 'p.jsonl',
      options: { mode: 'extract' },
      scoring: 'faithful',
      excludeErrors: false,
    } as never);
    assert.match(
      report.text,
      /INVALID HERE 42 \(1 sample; ours 0 passed, published 1 passed\): the reference calls Google's geocoding service/,
    );
  });
});
