/** benchgym score: published-format predictions scored like submissions, agreement and disagreements printed. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers.ts';
import { runCli } from './cli.ts';
import { SKIP_WITHOUT_DATA, V2_DIR } from '../envs/gitchameleon/data.ts';

test('benchgym score: agreement, every disagreement with its reason, --mode, --json', { skip: SKIP_WITHOUT_DATA }, async () => {
  const dir = await tempDir('benchgym-score-');
  try {
    const gold = (await fs.readFile(path.join(V2_DIR, 'ground_truth_solutions.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { example_id: string; answer: string });
    const answer187 = gold.find((g) => g.example_id === '187')!.answer;
    const predictions = path.join(dir, 'predictions.jsonl');
    await fs.writeFile(
      predictions,
      [
        // The gold answer in a fence, published as passed: agreement.
        { example_id: '187', answer: `Here it is:\n\`\`\`python\n${answer187}\n\`\`\``, passed: 'True' },
        // The gold answer again, but published as failed: a disagreement.
        { example_id: '187', answer: `\`\`\`python\n${answer187}\n\`\`\``, passed: 'False' },
        // A right answer with a "2" in its only statement, with no published verdict: scored, not compared.
        { example_id: '187', answer: '```python\nimport sympy\ndef custom_function(eq):\n    return (eq.lhs - eq.rhs) * 2 / 2\n```' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );

    const r = await runCli(['score', '--suite', 'gitchameleon', '--dataset', V2_DIR, '--predictions', predictions, '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /gitchameleon: 3 predictions \(mode extract\): 3\/3 passed \(100\.0%\); 0 failed, 0 unavailable here/);
    assert.match(
      r.stdout,
      new RegExp(
        String.raw`agreement with the published verdicts: 1\/2 \(50\.0%\) as measured; every published verdict compared is ` +
          String.raw`sound; published 1 passed, ours 2 on the same rows`,
      ),
    );
    assert.match(r.stdout, /^ {2}DISAGREE 187 \(line 2\): ours passed, theirs failed: \d+ passed$/m);

    // The v1 line filter drops every line with a "2": the third answer loses its return statement.
    const json = await runCli([
      'score',
      '--suite',
      'gitchameleon',
      '--dataset',
      V2_DIR,
      '--predictions',
      predictions,
      '--mode',
      'authors-sanitizer',
      '--json',
      '--data-dir',
      dir,
    ]);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { mode: string; results: { taskId: string; ours: string; reason: string }[] };
    assert.equal(report.mode, 'authors-sanitizer');
    assert.deepEqual(
      report.results.map((x) => x.ours),
      ['passed', 'passed', 'failed'],
    );
    assert.match(json.stderr, /^$/, '--json prints no per-row lines');

    const bad = await runCli(['score', '--suite', 'gitchameleon', '--dataset', V2_DIR, '--predictions', predictions, '--mode', 'loose']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /INVALID_ARGUMENT: invalid --mode: 'loose' \(extract or authors-sanitizer\)/);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
