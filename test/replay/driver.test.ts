/** The generic replay driver: rows → submissions → scores → the suite's (or the generic) summary, with fake scoring. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { GymError } from '../../src/errors.ts';
import type { ReplayAdapter } from '../../src/replay/adapter.ts';
import { replay, scoreSubmissions, type ReplayInput, type ReplayScore } from '../../src/replay/driver.ts';
import type { SubmissionResult } from '../../src/replay/generic.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { expectGymError, pythonTask, tempDir } from '../helpers.ts';

const Row = z.object({ task: z.string(), code: z.array(z.string()), passed: z.array(z.boolean()).optional() });
type Row = z.infer<typeof Row>;

/** A suite's replay that gives only its rows and submissions: everything else is the generic replay's. */
const minimal: ReplayAdapter<Row> = {
  rowFormat: 'task, code[], passed[]',
  usage: '  benchgym score --suite fake ...',
  row: Row,
  taskOf: (row) => row.task,
  submissions: (row, task, line) =>
    row.code.map((code, sample) => ({
      taskId: task.id,
      sample,
      patch: code === '' ? null : code,
      line,
      ...(row.passed ? { published: row.passed[sample] ? ('passed' as const) : ('failed' as const) } : {}),
    })),
};

const TASKS: Task[] = ['one', 'two', 'three'].map((id) => pythonTask({ id, suite: 'fake', files: { 'a.py': '' } }));

function verdict(task: Task, status: Verdict['status'], extra: Partial<Verdict> = {}): Verdict {
  return { taskId: task.id, suite: task.suite, reward: status === 'passed' ? 1 : 0, status, tests: [], notes: [], durationMs: 1, ...extra };
}

/** Scores a patch by what it says: pass, fail, unavailable, error (a verdict), throw (scoring throws), slow-pass. */
const fakeScore =
  (calls: string[] = []): ReplayScore =>
  async (task, patch) => {
    calls.push(`${task.id}:${patch}`);
    if (patch === 'slow-pass') await new Promise((r) => setTimeout(r, 30));
    if (patch.endsWith('pass')) return verdict(task, 'passed', { tests: [{ name: 't', status: 'passed' }] });
    if (patch === 'fail') return verdict(task, 'failed', { tests: [{ name: 'test_x', status: 'failed', message: 'assert 1 == 2\nmore' }] });
    if (patch === 'unavailable') return verdict(task, 'error', { error: { code: 'ENV_UNAVAILABLE', message: 'no Python 3.2 here' } });
    if (patch === 'error') return verdict(task, 'error', { error: { code: 'SANDBOX_UNAVAILABLE', message: 'no sandbox' } });
    if (patch === 'cancel') throw new GymError('CANCELLED', 'stopped');
    throw new GymError('INTERNAL', 'scoring broke\nstack');
  };

describe('the replay driver', () => {
  let dir: string;
  before(async () => {
    dir = await tempDir('benchgym-replay-');
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  const file = async (name: string, rows: unknown[] | string) => {
    const p = path.join(dir, name);
    await fs.writeFile(p, typeof rows === 'string' ? rows : rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    return p;
  };
  const input = (predictions: string, extra: Partial<ReplayInput<unknown>> = {}): ReplayInput<unknown> => ({
    suite: 'fake',
    tasks: TASKS,
    dataset: dir,
    predictions,
    options: undefined,
    scoring: 'faithful',
    score: fakeScore(),
    concurrency: 2,
    ...extra,
  });

  test('the generic replay: each sample scored and compared, skipped and infrastructure outcomes apart, in input order', async () => {
    const predictions = await file('p.jsonl', [
      { task: 'one', code: ['slow-pass', 'fail'], passed: [true, true] },
      { task: 'two', code: ['unavailable', '', 'error'] },
      { task: 'three', code: ['throw'] },
    ]);
    const progress: string[] = [];
    const report = await replay(minimal, input(predictions, { onProgress: (l) => progress.push(l) }));
    const { results, summary } = report.json as { results: SubmissionResult[]; summary: Record<string, unknown> };
    assert.deepEqual(
      results.map((r) => `${r.taskId}#${r.sample} ${r.ours}${r.agree === undefined ? '' : r.agree ? ' agree' : ' DISAGREE'}`),
      ['one#0 passed agree', 'one#1 failed DISAGREE', 'two#0 unavailable', 'two#1 skipped', 'two#2 error', 'three#0 error'],
    );
    assert.equal(results[1]!.reason, 'test_x: assert 1 == 2');
    assert.equal(results[5]!.reason, 'INTERNAL: scoring broke');
    const { agreementFigures: figures, ...counts } = summary as { agreementFigures: Record<string, unknown> };
    assert.deepEqual(counts, {
      submissions: 6,
      passed: 1,
      failed: 1,
      unavailable: 1,
      apart: 0,
      errors: 2,
      skipped: 1,
      passRate: 0.25,
      scoredPassRate: 0.5,
      compared: 2,
      agreed: 1,
      agreement: 0.5,
    });
    assert.deepEqual(
      {
        compared: figures.compared,
        soundCompared: figures.soundCompared,
        disagreements: figures.disagreements,
        causes: figures.causes,
        apart: figures.apart,
      },
      { compared: 2, soundCompared: 2, disagreements: 1, causes: { unexplained: 1 }, apart: 1 },
    );
    assert.equal(report.exitCode, 1, 'scoring errors exit 1');
    // The scoring errors did not pass: in the headline's denominator; the unavailable and the unscored in neither.
    assert.match(
      report.text,
      new RegExp(
        String.raw`^\nfake: 6 submissions: 1\/4 passed \(25\.0%\), 2 errors; over the 2 scored: 50\.0%; 1 failed, 1 ` +
          String.raw`unavailable here, 1 not scored; scoring faithful\n`,
      ),
    );
    const old = await replay(minimal, input(predictions, { excludeErrors: true }));
    assert.match(old.text, /^\nfake: 6 submissions: 1\/2 scored passed \(50\.0%\), 2 errors left out; over all 4: 25\.0%; 1 failed, /);
    assert.match(report.text, /^ {2}DISAGREE one #1 \(line 1\): ours failed, theirs passed: test_x: assert 1 == 2$/m);
    assert.match(
      report.text,
      /^ {2}UNAVAILABLE two \(1 sample; ours 0 passed, published 0 passed\): ENV_UNAVAILABLE: no Python 3\.2 here$/m,
    );
    assert.equal(progress.length, 6);
    assert.match(
      progress.find((l) => l.includes('one #1'))!,
      /^failed {6}one #1 \(published: passed, DISAGREE\)/,
    );
  });

  test('--tasks: only those rows; an id the suite lacks is TASK_NOT_FOUND naming it; rows for unknown tasks are refused', async () => {
    const predictions = await file('q.jsonl', [
      { task: 'one', code: ['pass'] },
      { task: 'two', code: ['fail'] },
      { task: 'nine', code: ['pass'] },
    ]);
    const only = await replay(minimal, input(predictions, { only: ['two'] }));
    assert.deepEqual(
      (only.json as { results: SubmissionResult[] }).results.map((r) => r.taskId),
      ['two'],
    );
    assert.equal(only.exitCode, 0);
    await expectGymError(
      replay(minimal, input(predictions, { only: ['two', 'ten', 'eleven'] })),
      'TASK_NOT_FOUND',
      /no task 'ten', 'eleven' in suite 'fake'/,
    );
    await expectGymError(replay(minimal, input(predictions)), 'TASK_NOT_FOUND', /rows for tasks not in the dataset: nine \(line 3\)/);
  });

  test("rows: JSON Lines or a JSON list, each checked by the suite's schema with its file and line", async () => {
    const list = await file(
      'list.json',
      JSON.stringify([
        { task: 'one', code: ['pass'] },
        { task: 'two', code: ['pass'] },
      ]),
    );
    const r = await replay(minimal, input(list));
    assert.deepEqual(
      (r.json as { results: SubmissionResult[] }).results.map((x) => `${x.taskId}:${x.line}`),
      ['one:1', 'two:2'],
    );
    const bad = await file('bad.jsonl', '{"task": "one", "code": ["pass"]}\n\n{"task": "two"}\n');
    await expectGymError(replay(minimal, input(bad)), 'INVALID_ARGUMENT', /bad\.jsonl:3: 'code'/);
    await expectGymError(
      replay({ ...minimal, describeIssues: () => 'not a fake row' }, input(bad)),
      'INVALID_ARGUMENT',
      /bad\.jsonl:3: not a fake row/,
    );
    const notJson = await file('nj.jsonl', '{"task": "one", "code": ["pass"]}\nnope\n');
    await expectGymError(replay(minimal, input(notJson)), 'INVALID_ARGUMENT', /nj\.jsonl:2: not JSON/);
    await expectGymError(
      replay(minimal, input(path.join(dir, 'missing.jsonl'))),
      'INVALID_ARGUMENT',
      /cannot read the predictions file .*missing\.jsonl/,
    );
  });

  test("a suite's own reading: options, kept rows, unknown rows counted, its results and report", async () => {
    const predictions = await file('own.jsonl', [
      { task: 'one', code: ['fail'] },
      { task: 'one', code: ['pass'] },
      { task: 'zero', code: ['pass'] },
    ]);
    const own: ReplayAdapter<Row, { tag: string }, string> = {
      ...minimal,
      flags: { tag: { type: 'string' } },
      options: (v) => ({ tag: String(v.tag ?? 'none') }),
      keep: (rows) => [...new Map(rows.map((r) => [r.row.task, r])).values()],
      refuseUnknown: () => null,
      result: async (s, { options }) => `${options.tag} ${s.submission.taskId} ${s.ours} ${s.row.code.join(',')}`,
      progress: (r) => r,
      report: async (results, ctx) => ({
        json: { results, unknown: ctx.unknown.map((u) => u.row.task), tasks: ctx.tasks.length },
        text: results.join('\n'),
        exitCode: 0,
      }),
    };
    const r = await replay(own, { ...input(predictions), options: own.options!({ tag: 'T' }) });
    assert.deepEqual(r.json, { results: ['T one passed pass'], unknown: ['zero'], tasks: 3 });
  });

  test('--scoring both: strict outcomes of faithful passes are listed', async () => {
    const predictions = await file('both.jsonl', [{ task: 'one', code: ['pass'] }]);
    const score: ReplayScore = async (task) => ({
      ...verdict(task, 'passed'),
      strictVerdict: verdict(task, 'failed', { notes: ['TAMPER_SUSPECTED: conftest.py'] }),
    });
    const r = await replay(minimal, input(predictions, { scoring: 'both', score }));
    assert.match(r.text, /strict vs faithful: 1 faithful passes scored strictly, 1 not passed in strict mode/);
    assert.deepEqual((r.json as { results: SubmissionResult[] }).results[0]!.strict, {
      status: 'failed',
      reason: 'TAMPER_SUSPECTED: conftest.py',
    });
  });

  test("samples in sequence: once a task's env is unavailable its other samples are not scored", async () => {
    const calls: string[] = [];
    const [one, two] = TASKS;
    const subs = ['unavailable', 'pass', 'pass'].map((patch, sample) => ({
      submission: { taskId: 'one', sample, patch, line: 1 },
      row: null,
      task: one!,
    }));
    const out = await scoreSubmissions(
      [...subs, { submission: { taskId: 'two', sample: 0, patch: 'pass', line: 2 }, row: null, task: two! }],
      fakeScore(calls),
      {
        concurrency: 2,
        samplesInSequence: true,
        settle: async (s) => `${s.submission.taskId}#${s.submission.sample} ${s.ours} ${s.verdict?.error?.code ?? ''}`,
      },
    );
    assert.deepEqual(out, [
      'one#0 unavailable ENV_UNAVAILABLE',
      'one#1 unavailable ENV_UNAVAILABLE',
      'one#2 unavailable ENV_UNAVAILABLE',
      'two#0 passed ',
    ]);
    assert.deepEqual(calls.sort(), ['one:unavailable', 'two:pass']);
  });

  test('CANCELLED from scoring, or an abort, stops the replay with CANCELLED', async () => {
    const predictions = await file('c.jsonl', [{ task: 'one', code: ['cancel'] }]);
    await expectGymError(replay(minimal, input(predictions)), 'CANCELLED');
    const stop = new AbortController();
    stop.abort();
    const ok = await file('ok.jsonl', [{ task: 'one', code: ['pass'] }]);
    await expectGymError(replay(minimal, input(ok, { signal: stop.signal })), 'CANCELLED', /cancelled/);
  });
});
