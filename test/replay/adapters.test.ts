/** The built-in suites' replay adapters: each a ReplayAdapter, wired into its suite, naming its suite in its usage. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinSuites } from '../../bin/builtins.ts';
import { replayAdapter as codereval } from '../../envs/codereval/replay.ts';
import { replayAdapter as gitchameleon } from '../../envs/gitchameleon/replay.ts';
import { replayAdapter as swebench } from '../../envs/swebench/replay.ts';
import type { Suite } from '../../src/tasks/suite.ts';

const ADAPTERS: Record<string, NonNullable<Suite['replay']>> = { gitchameleon, codereval, 'swe-bench-java': swebench };

test("each built-in replay is its suite's, and its usage names the suite", () => {
  const suites = builtinSuites();
  assert.deepEqual(
    suites
      .filter((s) => s.replay)
      .map((s) => s.id)
      .sort(),
    Object.keys(ADAPTERS).sort(),
  );
  for (const [id, adapter] of Object.entries(ADAPTERS)) {
    assert.equal(suites.find((s) => s.id === id)!.replay, adapter, id);
    assert.match(adapter.usage, new RegExp(`^ {2}benchgym score --suite ${id} `), id);
  }
});

test("the replays' own flags and options: --mode is checked, --out defaults to ./swebench-run", () => {
  assert.deepEqual(gitchameleon.options!({}), { mode: 'extract' });
  assert.throws(() => gitchameleon.options!({ mode: 'loose' }), /invalid --mode: 'loose' \(extract or authors-sanitizer\)/);
  assert.match(swebench.options!({}).out, /\/swebench-run$/);
  assert.deepEqual(Object.keys(codereval.flags ?? {}), []);
});
