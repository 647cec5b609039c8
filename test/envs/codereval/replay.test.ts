/** Replay pieces on hand-made data: the output format, Acc@k by level and category, Pass@k ours beside theirs. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import {
  candidatePatch,
  formatReplay,
  platformCopyPatch,
  outputsAccAtK,
  readOutputs,
  summarize,
  type OutputRow,
  type SampleResult,
} from '../../../envs/codereval/replay.ts';
import type { Task } from '../../../src/tasks/schema.ts';
import { tempDir } from '../../helpers.ts';

const task = (metadata: Record<string, unknown>) => ({ metadata }) as unknown as Task;

describe('CoderEval replay', () => {
  test('the official output format is read; a bad line is named with what was expected', async () => {
    const dir = await tempDir('codereval-out-');
    try {
      const file = path.join(dir, 'x_out.jsonl');
      await fs.writeFile(
        file,
        JSON.stringify({
          _id: 'a',
          level: 'self_contained',
          generate_results: [{ generate_code: 'def f(): pass', is_pass: true, return_code: 0 }, 'def f(): return 1'],
        }) + '\n',
      );
      const [row] = await readOutputs(file);
      assert.deepEqual(
        row!.generate_results.map((g) => [g.generate_code, g.is_pass]),
        [
          ['def f(): pass', true],
          ['def f(): return 1', undefined],
        ],
      );
      await fs.writeFile(file, '{"_id": "a"}\n');
      await assert.rejects(readOutputs(file), (e: Error) =>
        /x_out\.jsonl:1: .*generate_results.*expected CoderEval's output format/.test(e.message),
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('a candidate is a new file holding the completion verbatim; an empty one still replaces the function', () => {
    assert.match(
      candidatePatch('def f():\n    return 1'),
      new RegExp(
        String.raw`^diff --git a\/\.codereval-candidate\.py b\/\.codereval-candidate\.py\nnew file mode ` +
          String.raw`100644\n[\s\S]*\n\+def f\(\):\n\+    return 1\n\\ No newline at end of file\n$`,
      ),
    );
    assert.match(candidatePatch(''), /@@ -0,0 \+1,1 @@\n\+\n$/);
  });

  test("inside its project a candidate comes with the project's own function as the platform's copy had it; elsewhere alone", async () => {
    const dir = await tempDir('codereval-copy-');
    try {
      await fs.mkdir(path.join(dir, 'pkg'));
      await fs.writeFile(path.join(dir, 'pkg', 'mod.py'), 'def f():\n    raise NotImplementedError\n');
      const inProject = {
        workspace: { type: 'dir', path: dir },
        solution: { files: { 'pkg/mod.py': 'def f():\n    return 1\n' } },
      } as unknown as Task;
      const patch = platformCopyPatch(inProject);
      assert.match(patch, /^diff --git a\/pkg\/mod\.py b\/pkg\/mod\.py\n--- a\/pkg\/mod\.py\n/);
      assert.match(patch, /^-    raise NotImplementedError$/m);
      assert.match(patch, /^\+    return 1$/m);
      const standalone = {
        workspace: { type: 'files', files: { 'mod.py': 'def f(): ...\n' } },
        solution: { files: { 'mod.py': 'def f(): return 1\n' } },
      } as unknown as Task;
      assert.equal(platformCopyPatch(standalone), '');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('Acc@k of published samples on hand-made tasks: by category, level, standalone and all', () => {
    const tasks = new Map([
      ['s', task({ level: 'self_contained', oracle_context: { TypeReference: ['Time'], APIInvocation: ['divmod', 'localize'] } })],
      ['f', task({ level: 'file_runnable', oracle_context: { VarReference: ['MAX'] } })],
      ['n', task({ level: 'class_runnable' })],
    ]);
    const rows: OutputRow[] = [
      { _id: 's', generate_results: [{ generate_code: 't = Time()' }, { generate_code: 'divmod(1, 2)  # TimeZone' }] },
      { _id: 'f', generate_results: [{ generate_code: 'x = MAXIMUM' }, { generate_code: 'return MAX' }] },
      { _id: 'n', generate_results: [{ generate_code: 'pass' }, { generate_code: 'pass' }] },
    ] as OutputRow[];
    const acc = outputsAccAtK(tasks, rows, [1, 2])!;
    assert.deepEqual(Object.keys(acc), ['self_contained', 'file_runnable', 'standalone', 'non-standalone', 'all']);
    assert.deepEqual(acc.self_contained, { TypeReference: { 1: 1, 2: 1 }, APIInvocation: { 1: 0, 2: 0.5 }, all: { 1: 1 / 3, 2: 2 / 3 } });
    assert.deepEqual(acc.file_runnable, { VarReference: { 1: 0, 2: 1 }, all: { 1: 0, 2: 1 } });
    assert.deepEqual(acc.all!.all, { 1: 1 / 4, 2: 3 / 4 });
    assert.deepEqual(acc['non-standalone'], acc.file_runnable);
    assert.equal(outputsAccAtK(new Map([['n', tasks.get('n')!]]), rows.slice(2)), undefined);
    assert.match(formatReplay([], summarize([]), acc, [1, 2]), /self_contained +APIInvocation +Acc@1 +0\.0% +Acc@2 +50\.0%/);
  });

  test('Pass@k per level from our verdicts beside the published ones, on the tasks both decided', () => {
    const r = (taskId: string, sample: number, level: string, ours: SampleResult['ours'], theirs: 'passed' | 'failed'): SampleResult => ({
      taskId,
      sample,
      level,
      ours,
      theirs,
      ...(ours === 'passed' || ours === 'failed' ? { agree: ours === theirs } : {}),
      reason: '',
      durationMs: 0,
    });
    const results = [
      r('a', 0, 'self_contained', 'passed', 'passed'),
      r('a', 1, 'self_contained', 'failed', 'passed'),
      r('b', 0, 'slib_runnable', 'failed', 'failed'),
      r('b', 1, 'slib_runnable', 'failed', 'failed'),
      r('c', 0, 'class_runnable', 'unavailable', 'passed'),
      r('c', 1, 'class_runnable', 'unavailable', 'failed'),
    ];
    const s = summarize(results, [1, 2]);
    assert.deepEqual([s.compared, s.agreed, s.unavailable], [4, 3, 2]);
    const by = Object.fromEntries(s.passAtK.map((f) => [f.level, f]));
    assert.deepEqual(
      [by.self_contained!.tasks, by.self_contained!.ours[1], by.self_contained!.theirs[1], by.self_contained!.ours[2]],
      [1, 0.5, 1, 1],
    );
    assert.deepEqual([by.class_runnable!.tasks, by.class_runnable!.theirsAll[1], by.class_runnable!.tasksAll], [0, 0.5, 1]);
    assert.deepEqual([by.standalone!.tasks, by.standalone!.ours[1], by.standalone!.theirs[1]], [2, 0.25, 0.5]);
    assert.deepEqual([by.all!.tasks, by.all!.tasksAll], [2, 3]);
    assert.match(formatReplay(results, s, undefined, [1, 2]), /DISAGREE a sample 1 \(self_contained\): ours failed, published passed/);
  });

  test('a sample whose scoring failed did not pass: in the headline and Pass@k per level; --exclude-errors leaves its task out', () => {
    const r = (taskId: string, sample: number, ours: SampleResult['ours'], theirs: 'passed' | 'failed'): SampleResult => ({
      taskId,
      sample,
      level: 'self_contained',
      ours,
      theirs,
      ...(ours === 'passed' || ours === 'failed' ? { agree: ours === theirs } : {}),
      reason: '',
      durationMs: 0,
    });
    const results = [r('a', 0, 'passed', 'passed'), r('b', 0, 'error', 'passed'), r('c', 0, 'error', 'failed')];
    const counted = summarize(results, [1]);
    assert.deepEqual([counted.passRate, counted.scoredPassRate], [1 / 3, 1]);
    const all = Object.fromEntries(counted.passAtK.map((f) => [f.level, f])).all!;
    assert.deepEqual([all.tasks, all.ours[1], all.theirs[1]], [3, 1 / 3, 2 / 3]);
    assert.match(
      formatReplay(results, counted, undefined, [1]),
      /^3 samples: 1\/3 passed \(33\.3%\), 2 errors; over the 1 scored: 100\.0%; 0 failed, 0 unavailable here/,
    );
    const old = summarize(results, [1], true);
    const allOld = Object.fromEntries(old.passAtK.map((f) => [f.level, f])).all!;
    assert.deepEqual([allOld.tasks, allOld.ours[1]], [1, 1]);
    assert.match(
      formatReplay(results, old, undefined, [1], true),
      /^3 samples: 1\/1 scored passed \(100\.0%\), 2 errors left out; over all 3: 33\.3%/,
    );
  });
});
