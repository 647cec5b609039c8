/**
 * What the CoderEval replay knows of the platform's run, on hand-made samples scored by a stand-in
 * scorer: tasks invalid here are counted apart (never compared), each disagreement the platform's
 * own artifacts explain is named per sample (pysolbase's shared log, infrared's recorded test,
 * zope's target that never runs), tasks whose test cannot fail leave the agreement over sound
 * verdicts, and the report says all of it, per level too.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { explainSample, KNOWN_DIFFERENCES, TASK_STANDING, taskApart } from '../../../envs/codereval/known_differences.ts';
import { formatReplay, replayOutputs, summarize, type OutputRow } from '../../../envs/codereval/replay.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import type { Task } from '../../../src/tasks/schema.ts';

const PYSOLBASE_APPEND = '62b8bbbfe0d34b282c181210';
const INFRARED_EXTEND_CLI = '63060b1b73426c38ae68ad43';
const INFRARED_PLUGIN_SPEC = '6306091c73426c38ae68acdc';
const ZOPE_TARGET_CLASS = '62b8b59feb7e40a82d2d1291';
const PLAIN = '62e60f43d76274f8a4026e28';

const task = (id: string, level: string): Task =>
  ({ id, suite: 'codereval', metadata: { level }, workspace: { type: 'files', files: {} } }) as unknown as Task;

/** A stand-in scorer: a candidate passes when its code says `return 1`. */
async function score(t: Task, patch: string): Promise<Verdict> {
  const passed = /\+.*return 1/.test(patch);
  return {
    taskId: t.id,
    suite: 'codereval',
    reward: passed ? 1 : 0,
    status: passed ? 'passed' : 'failed',
    tests: [],
    notes: [],
    durationMs: 1,
    ...(passed ? {} : { exitCode: 1 }),
  } as Verdict;
}

const row = (id: string, level: string, samples: [code: string, published: boolean][]): OutputRow =>
  ({ _id: id, level, generate_results: samples.map(([generate_code, is_pass]) => ({ generate_code, is_pass })) }) as OutputRow;

describe('CoderEval: what the replay knows of the platform', () => {
  test('the tables name real task ids, and every known difference names its evidence', () => {
    for (const id of [...Object.keys(TASK_STANDING), ...KNOWN_DIFFERENCES.flatMap((d) => d.tasks)]) assert.match(id, /^[0-9a-f]{24}$/, id);
    for (const d of KNOWN_DIFFERENCES) assert.match(d.detail, /README, Known differences/, d.name);
  });

  test('a task invalid here is apart (by its bare id or with its project), one whose test cannot fail is compared', () => {
    assert.equal(taskApart({ id: INFRARED_PLUGIN_SPEC })?.standing, 'invalid');
    assert.match(taskApart({ id: `redhat-openstack---infrared/${INFRARED_PLUGIN_SPEC}` })!.reason, /plugin\.spec/);
    assert.equal(taskApart({ id: INFRARED_EXTEND_CLI }), undefined);
    assert.equal(taskApart({ id: PLAIN }), undefined);
  });

  test("a known difference decides only the samples it explains: pysolbase's shared log fails what passes here", () => {
    const s = (id: string, ours: string, published: 'passed' | 'failed') =>
      ({ task: task(id, 'file_runnable'), ours, submission: { published } }) as Parameters<typeof explainSample>[0];
    assert.equal(explainSample(s(PYSOLBASE_APPEND, 'passed', 'failed'))?.name, 'pysolbase-shared-log');
    // Ours failed too: the shared log did not decide it (their verdict agrees on its own).
    assert.equal(explainSample(s(PYSOLBASE_APPEND, 'failed', 'failed')), undefined);
    assert.equal(explainSample(s(INFRARED_EXTEND_CLI, 'passed', 'failed'))?.name, 'infrared-extend-cli-recorded-test');
    // Where both pass, extend_cli's test still cannot fail here: that verdict is not sound.
    assert.equal(explainSample(s(INFRARED_EXTEND_CLI, 'passed', 'passed'))?.kind, 'cannot-fail');
    assert.equal(explainSample(s(ZOPE_TARGET_CLASS, 'passed', 'failed'))?.name, 'zope-target-never-runs');
    assert.equal(explainSample(s(PLAIN, 'passed', 'failed')), undefined);
  });

  test('the replay counts apart, names each cause per sample, and gives both agreements, per level too', async () => {
    const tasks = new Map([
      [PLAIN, task(PLAIN, 'self_contained')],
      [PYSOLBASE_APPEND, task(PYSOLBASE_APPEND, 'file_runnable')],
      [INFRARED_EXTEND_CLI, task(INFRARED_EXTEND_CLI, 'project_runnable')],
      [INFRARED_PLUGIN_SPEC, task(INFRARED_PLUGIN_SPEC, 'class_runnable')],
    ]);
    const rows = [
      row(PLAIN, 'self_contained', [
        ['def f():\n    return 1', true],
        ['def f():\n    return 2', true],
      ]),
      row(PYSOLBASE_APPEND, 'file_runnable', [
        ['def f():\n    return 1', false],
        ['def f():\n    return 2', false],
      ]),
      row(INFRARED_EXTEND_CLI, 'project_runnable', [
        ['def f():\n    return 1', false],
        ['def f():\n    return 1', true],
      ]),
      row(INFRARED_PLUGIN_SPEC, 'class_runnable', [
        ['def f():\n    return 2', true],
        ['def f():\n    return 2', false],
      ]),
    ];
    const results = await replayOutputs(tasks, rows, score, { concurrency: 1 });
    const byKey = new Map(results.map((r) => [`${r.taskId}#${r.sample}`, r]));
    // The plugin.spec task: scored, never compared, in no rate.
    assert.equal(byKey.get(`${INFRARED_PLUGIN_SPEC}#0`)!.agree, undefined);
    assert.equal(byKey.get(`${INFRARED_PLUGIN_SPEC}#0`)!.apart?.standing, 'invalid');
    assert.equal(byKey.get(`${PYSOLBASE_APPEND}#0`)!.cause?.name, 'pysolbase-shared-log');
    assert.equal(byKey.get(`${PYSOLBASE_APPEND}#1`)!.cause, undefined);
    assert.equal(byKey.get(`${INFRARED_EXTEND_CLI}#0`)!.cause?.name, 'infrared-extend-cli-recorded-test');
    assert.equal(byKey.get(`${PLAIN}#1`)!.cause?.kind, 'unexplained');

    const s = summarize(results, [1]);
    const f = s.agreementFigures;
    // Compared: 6 (the 2 apart are not); agree: plain#0, pysolbase#1, extend_cli#1.
    assert.deepEqual([f.compared, f.agreed, f.disagreements, f.apart, s.apart], [6, 3, 3, 2, 2]);
    // Sound: the 2 extend_cli samples (cannot fail) and pysolbase#0 (known difference) are left out.
    assert.deepEqual([f.soundCompared, f.soundAgreed], [3, 2]);
    assert.deepEqual(f.causes, { 'known-difference': 2, unexplained: 1 });
    const levels = Object.fromEntries(s.agreementByLevel.map((a) => [a.level, a]));
    assert.deepEqual(
      [levels.project_runnable!.compared, levels.project_runnable!.agreed, levels.project_runnable!.soundCompared],
      [2, 1, 0],
    );
    assert.deepEqual([levels.class_runnable!.compared, levels.class_runnable!.apart], [0, 2]);

    const text = formatReplay(results, s, undefined, [1]);
    assert.match(
      text,
      /agreement with the published is_pass: 3\/6 \(50\.0%\) as measured; 2\/3 \(66\.7%\) over the 3 whose published verdict is sound/,
    );
    assert.match(
      text,
      /known difference of the original harness: pysolbase-shared-log \(1\): the platform ran every sample in one working directory/,
    );
    assert.match(text, new RegExp(`DISAGREE ${PYSOLBASE_APPEND} sample 0 \\(file_runnable\\): ours passed, published failed`));
    assert.match(
      text,
      /known difference of the original harness: infrared-extend-cli-recorded-test \(1\): the platform ran the older test/,
    );
    assert.match(text, /not explained \(1\)\n {2}DISAGREE 62e60f43d76274f8a4026e28 sample 1/);
    assert.match(
      text,
      new RegExp(`INVALID HERE ${INFRARED_PLUGIN_SPEC} \\(2 samples; ours 0 passed, published 1 passed\\): .*plugin\\.spec`),
    );
    assert.match(text, /agreement per runnable level[^\n]*\n {2}self_contained +1\/2 \(50\.0%\) +1\/2 \(50\.0%\) +0 apart/);
    assert.match(text, / {2}class_runnable +n\/a +n\/a +2 apart/);
  });
});
