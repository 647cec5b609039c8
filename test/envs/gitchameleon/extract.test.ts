/** From raw model output to scored code: the authors' fence extraction and sanitizer, and the patch a prediction becomes. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import {
  authorsSanitize,
  authorsUnescape,
  candidateCode,
  extractCode,
  solutionFromCompletion,
} from '../../../envs/gitchameleon/extract.ts';
import { readPredictions, summarize, verdictReason, type ReplayResult } from '../../../envs/gitchameleon/replay.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import { expectGymError, tempDir } from '../../helpers.ts';

describe('extractCode (the v2 harness)', () => {
  test('the body of the first ```python fence, its leading newline kept', () => {
    assert.equal(extractCode('Sure:\n```python\nimport x\nprint(x)\n```\nDone.'), '\nimport x\nprint(x)\n');
    assert.equal(extractCode('```python\na = 1\n```\n```python\nb = 2\n```'), '\na = 1\n');
  });

  test('no ```python fence: the whole output, unlabelled fences included', () => {
    assert.equal(extractCode('x = 1\n'), 'x = 1\n');
    assert.equal(extractCode('```\nx = 1\n```'), '```\nx = 1\n```');
    assert.equal(extractCode('```py\nx = 1\n```'), '```py\nx = 1\n```');
  });

  test('quirks kept: ```python3 keeps the "3"; an unclosed fence is not a fence', () => {
    assert.equal(extractCode('```python3\nx = 1\n```'), '3\nx = 1\n');
    assert.equal(extractCode('```python\nx = 1\n'), '```python\nx = 1\n');
  });
});

describe('authorsSanitize (the v1 harness)', () => {
  test('drops lines with assert, answer, assistant / Assistant, and (the bug) any digit 2', () => {
    const code =
      [
        'import numpy as np',
        'x = np.arange(3)',
        'assert x.sum() == 3',
        'answer = x',
        'y = 2 * x',
        'for i in range(12): pass',
        'z = x  # the assistant wrote this',
        'Assistant: here',
        'w = 1',
      ].join('\n') + '\n';
    assert.equal(authorsSanitize(code), 'import numpy as np\nx = np.arange(3)\nw = 1\n');
  });

  test('case-sensitive: Answer and ASSERT survive', () => {
    assert.equal(authorsSanitize('Answer = 1\nASSERT = 0\n'), 'Answer = 1\nASSERT = 0\n');
  });

  test('empties lines calling .show(...) or .launch(...), keeping the line break', () => {
    assert.equal(
      authorsSanitize('import matplotlib.pyplot as plt\nplt.plot([1])\nplt.show()\nx = 1\n'),
      'import matplotlib.pyplot as plt\nplt.plot([1])\n\nx = 1\n',
    );
    assert.equal(
      authorsSanitize('iface = gr.Interface(fn=f)\niface.launch(share=True)\n'),
      'iface = gr.Interface(fn=f)\n',
      'at the end, the trailing \\s* takes the last newline too',
    );
    assert.equal(authorsSanitize('plt.show\n'), 'plt.show\n', 'no call, no removal');
  });

  test('removes chat-template debris and cuts at the first `if __name__ ==`', () => {
    assert.equal(authorsSanitize('[inst] do it\n[starter_code]\n[ PYTHON ]\nx = 1\n[/ PYTHON]\n<|placeholder6|>\n'), 'x = 1\n');
    assert.equal(authorsSanitize('def f():\n    return 1\n\nif __name__ == "__main__":\n    print(f())\n'), 'def f():\n    return 1\n\n');
  });

  test('leaves an emptied block behind, as the harness did (the script then fails to compile)', () => {
    assert.equal(authorsSanitize('if ok:\n    assert x\ny = 1\n'), 'if ok:\ny = 1\n');
  });

  test('lines end at \\n only, as in Python: a \\r or U+2028 inside a line does not split it', () => {
    assert.equal(authorsSanitize('a = 1\rassert b\nc = 1\n'), 'c = 1\n');
    assert.equal(authorsSanitize('a = 1\u2028answer\nc = 1\n'), 'c = 1\n');
  });

  test('candidateCode: extraction alone, or extraction then the sanitizer', () => {
    const out = '```python\nimport x\nassert x\nprint(x)\n```';
    assert.equal(candidateCode(out), '\nimport x\nassert x\nprint(x)\n');
    assert.equal(candidateCode(out, 'authors-sanitizer'), '\nimport x\nprint(x)\n');
  });

  test('the v1 writer unescapes \\n unless the script holds a triple quote; completions follow the starter code', () => {
    assert.equal(authorsUnescape('a = 1\\nb = 2'), 'a = 1\nb = 2');
    assert.equal(authorsUnescape('"""doc"""\\nb = 2'), '"""doc"""\\nb = 2');
    assert.equal(solutionFromCompletion('x = ', '1\n'), 'x = 1\n');
  });
});

describe('predictions', () => {
  test('the published format: example_id, answer (or solution, output), passed as "True"/"False" or a boolean', async () => {
    const dir = await tempDir('benchgym-gc-pred-');
    try {
      const file = path.join(dir, 'p.jsonl');
      await fs.writeFile(
        file,
        [
          JSON.stringify({ example_id: '5', answer: 'a', passed: 'True', output: 'pytest log' }),
          JSON.stringify({ example_id: 6, solution: 'b', passed: false }),
          '',
          JSON.stringify({ idx: 7, output: 'c' }),
        ].join('\n'),
      );
      const rows = await readPredictions(file);
      assert.deepEqual(
        rows.map((r) => [r.taskId, r.answer, r.passed, r.line]),
        [
          ['5', 'a', true, 1],
          ['6', 'b', false, 2],
          ['7', 'c', undefined, 4],
        ],
      );
      await fs.writeFile(file, JSON.stringify({ answer: 'x' }) + '\n');
      await expectGymError(readPredictions(file), 'INVALID_ARGUMENT', /p\.jsonl:1: no example_id/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('summaries count unavailable problems apart and compare only rows both sides decided', () => {
    const r = (ours: ReplayResult['ours'], theirs?: 'passed' | 'failed'): ReplayResult => ({
      taskId: 'x',
      line: 1,
      ours,
      reason: '',
      durationMs: 0,
      ...(theirs ? { theirs } : {}),
      ...(theirs && (ours === 'passed' || ours === 'failed') ? { agree: ours === theirs } : {}),
    });
    const s = summarize([r('passed', 'passed'), r('failed', 'passed'), r('unavailable', 'failed'), r('error', 'passed'), r('passed')]);
    const { agreementFigures, ...counts } = s;
    assert.deepEqual(counts, {
      rows: 5,
      passed: 2,
      failed: 1,
      unavailable: 1,
      apart: 0,
      errors: 1,
      compared: 2,
      agreed: 1,
      agreement: 0.5,
      theirPassed: 2,
      ourPassedOfCompared: 1,
      passRate: 0.5,
      scoredPassRate: 2 / 3,
    });
    // The one disagreement has no cause the suite can tell; every compared verdict is sound.
    assert.deepEqual(
      { disagreements: agreementFigures.disagreements, causes: agreementFigures.causes, soundCompared: agreementFigures.soundCompared },
      { disagreements: 1, causes: { unexplained: 1 }, soundCompared: 2 },
    );
    const v = {
      taskId: 'x',
      suite: 's',
      reward: 0,
      status: 'failed',
      tests: [{ name: 't::a', status: 'failed', message: 'AssertionError: 1 != 2\nmore' }],
      notes: [],
      durationMs: 1,
    } as Verdict;
    assert.equal(verdictReason(v), 't::a: AssertionError: 1 != 2');
  });
});
