import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Gym } from '../../src/episode/gym.ts';
import { replayAgent, REPLAY_DIFF } from '../../agents/replay/index.ts';
import { makeGym } from '../helpers.ts';
import { EXAMPLES, readExample, runAgent } from './harness.ts';

const NO_MODEL = { model: 'none' };

/** A unified diff of the inventory fix, as `diff -u` writes it (a/ and b/ prefixes). */
function goldDiff(): Promise<string> {
  const task = path.join(EXAMPLES, 'inventory-discount-bug');
  return new Promise((resolve, reject) =>
    execFile(
      'diff',
      [
        '-u',
        '--label',
        'a/shop/cart.py',
        '--label',
        'b/shop/cart.py',
        path.join(task, 'workspace/shop/cart.py'),
        path.join(task, 'solution/shop/cart.py'),
      ],
      (err, stdout) =>
        // diff exits 1 when the files differ.
        err && (err as { code?: number }).code !== 1 ? reject(err) : resolve(stdout),
    ),
  );
}

describe('replay agent', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;

  before(async () => {
    ({ gym, cleanup } = await makeGym());
  });
  after(async () => cleanup());

  test("goldFiles (filled from the task's solution, as the runner does) → reward 1", async () => {
    const task = await gym.registry.task('examples', 'roman-numerals');
    assert.ok(task.solution?.files);
    const { result } = await runAgent(gym, 'roman-numerals', replayAgent, { goldFiles: task.solution.files }, NO_MODEL);
    assert.equal(result.stopReason, 'submitted');
    assert.equal(result.verdict?.reward, 1, JSON.stringify(result.verdict));
    assert.deepEqual(result.usage, { promptTokens: 0, completionTokens: 0, costUsd: 0, calls: 0 });
  });

  test('a unified diff is applied with git apply and scored → reward 1; the diff file is gone', async () => {
    const patch = await goldDiff();
    assert.match(patch, /^--- a\/shop\/cart\.py/m);
    const { result, episodeId, events } = await runAgent(
      gym,
      'inventory-discount-bug',
      replayAgent,
      { predictions: { 'inventory-discount-bug': patch } },
      NO_MODEL,
    );
    assert.equal(result.verdict?.reward, 1, JSON.stringify(result.verdict));
    assert.ok(events.some((e) => e.type === 'replay' && e.kind === 'patch' && e.applied === true));
    const diff = gym.episode(episodeId).finalDiff ?? '';
    assert.match(diff, /percent_of\(taxable, self\.coupon_percent\)/);
    assert.doesNotMatch(diff, new RegExp(REPLAY_DIFF.replace('.', '\\.')));
  });

  test('predictions by suite/id with {files}; a patch that does not apply scores 0', async () => {
    const gold = await readExample('roman-numerals/solution/roman.py');
    const byFiles = await runAgent(
      gym,
      'roman-numerals',
      replayAgent,
      { predictions: { 'examples/roman-numerals': { files: { 'roman.py': gold } } } },
      NO_MODEL,
    );
    assert.equal(byFiles.result.verdict?.reward, 1);

    const broken = '--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -1,3 +1,3 @@\n-no such line\n+nothing\n context\n';
    const { result, events } = await runAgent(gym, 'inventory-discount-bug', replayAgent, { patch: broken }, NO_MODEL);
    assert.equal(result.submitted, true);
    assert.equal(result.verdict?.reward, 0);
    assert.ok(events.some((e) => e.type === 'replay' && e.applied === false));
  });

  test('no prediction for the task: the unchanged workspace is submitted (reward 0)', async () => {
    const { result, events } = await runAgent(gym, 'roman-numerals', replayAgent, { predictions: { other: 'x' } }, NO_MODEL);
    assert.equal(result.submitted, true);
    assert.equal(result.verdict?.reward, 0);
    assert.ok(events.some((e) => e.type === 'replay' && e.source === 'none'));
  });
});
