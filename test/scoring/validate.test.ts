import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import type { Gym } from '../../src/episode/gym.ts';
import { GymError } from '../../src/errors.ts';
import { scoreInFreshSandbox, type ScoringSteps } from '../../src/scoring/pipeline.ts';
import { scorePatch } from '../../src/scoring/scorer.ts';
import { validateTask } from '../../src/scoring/validate.ts';
import { SuiteRegistry } from '../../src/tasks/registry.ts';
import type { Suite } from '../../src/tasks/suite.ts';
import { makeGym, pythonTask } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
before(async () => ({ gym, cleanup } = await makeGym()));
after(() => cleanup());

const TESTS = { 'tests/test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n' };
const GOLD = { 'calc.py': 'def add(a, b):\n    return a + b\n' };

test('a task whose start state passes is invalid, with the reason', async () => {
  // The check cannot fail: the test catches what the stub raises.
  const task = pythonTask({
    id: 'no-check',
    files: { 'calc.py': 'def add(a, b):\n    raise NotImplementedError\n' },
    hidden: {
      'tests/test_calc.py': 'from calc import add\n\n\ndef test_add():\n    try:\n        add(2, 3)\n    except Exception:\n        pass\n',
    },
    solution: { files: GOLD },
  });
  const v = await validateTask(gym, task);
  assert.equal(v.status, 'invalid');
  assert.match(v.reasons.join('; '), /the untouched start state already passes the hidden tests \(strict scoring\)/);
});

test("a task whose start state passes only under the benchmark's own harness (faithful) is invalid too", async () => {
  // The stub ends the process with 0 before pytest's session ends: the exit code decides for the harness.
  const task = pythonTask({
    id: 'stub-exits',
    files: { 'calc.py': 'def add(a, b):\n    import os\n    os._exit(0)\n' },
    tests: { hidden: { runner: { type: 'pytest', args: ['tests'] }, files: TESTS, passWhen: 'exit-code' }, testFiles: ['tests/**'] },
    solution: { files: GOLD },
  });
  const v = await validateTask(gym, task);
  assert.equal(v.startState?.reward, 0, 'strict mode gives the start state 0');
  assert.equal(v.status, 'invalid', v.reasons.join('; '));
  assert.match(v.reasons.join('; '), /start state passes the hidden tests under faithful scoring/);
  assert.equal(v.startStateOtherMode?.scoring, 'faithful');
  assert.equal(v.startStateOtherMode?.reward, 1);
});

test('a sound task is valid: gold 1, start state 0 in both modes', async () => {
  const task = pythonTask({
    id: 'sound',
    files: { 'calc.py': 'def add(a, b):\n    raise NotImplementedError\n' },
    hidden: TESTS,
    solution: { files: GOLD },
  });
  const v = await validateTask(gym, task);
  assert.equal(v.status, 'valid', v.reasons.join('; '));
  assert.equal(v.startStateOtherMode?.reward, 0);
});

test("a suite whose scorer ignores the mode has its start state scored once, in the gym's mode", async () => {
  // The same suite twice, with and without the flag; its scorer is the generic one, recording each call's mode.
  const modes: string[] = [];
  const suiteOf = (id: string, scoringModeIndependent: boolean): Suite => ({
    id,
    description: 'a suite whose scorer records the mode of each call',
    metadata: z.object({}).passthrough(),
    load: async () => [],
    privatePaths: () => [],
    scoringModeIndependent,
    score: (task, patch, deps, opts) => {
      modes.push(`${task.suite}:${opts.scoring ?? 'strict'}`);
      return scorePatch(task, patch, deps, opts);
    },
  });
  const registry = new SuiteRegistry([suiteOf('one-verdict', true), suiteOf('two-modes', false)]);
  registry.enable('one-verdict');
  registry.enable('two-modes');
  const own = await makeGym({ registry });
  try {
    const sound = (suite: string) =>
      pythonTask({
        id: 'sound',
        suite,
        files: { 'calc.py': 'def add(a, b):\n    raise NotImplementedError\n' },
        hidden: TESTS,
        solution: { files: GOLD },
      });
    const once = await validateTask(own.gym, sound('one-verdict'));
    assert.equal(once.status, 'valid', once.reasons.join('; '));
    assert.equal(once.startStateOtherMode, undefined);
    const twice = await validateTask(own.gym, sound('two-modes'));
    assert.equal(twice.status, 'valid', twice.reasons.join('; '));
    assert.equal(twice.startStateOtherMode?.scoring, 'faithful');
    // start state and gold for the first; start state in each mode and gold for the second.
    assert.deepEqual(modes, ['one-verdict:strict', 'one-verdict:strict', 'two-modes:strict', 'two-modes:faithful', 'two-modes:strict']);
  } finally {
    await own.cleanup();
  }
});

test('a reference whose scoring sandbox fails twice after its code began to run is an error, never an invalid task', async () => {
  // The harness's test run is lost on every attempt for the reference only (the start state scores as usual):
  // strict scoring counts that against a candidate; for the reference it proves nothing of the task.
  const lostRun: ScoringSteps = {
    patch: { failedNote: 'PATCH_APPLY_FAILED: no' },
    running: 'running',
    layDownTests: async () => {},
    runTests: async () => Promise.reject(new GymError('SANDBOX_UNAVAILABLE', 'the executor was killed by SIGKILL')),
    decide: () => ({ reward: 0, status: 'failed', tests: [], notes: [] }),
  };
  const suite: Suite = {
    id: 'lost-gold',
    description: 'a suite whose harness loses the sandbox while the reference is tested',
    metadata: z.object({}).passthrough(),
    load: async () => [],
    privatePaths: () => [],
    score: (task, patch, deps, opts) =>
      patch ? scoreInFreshSandbox(task, patch, deps, opts, () => lostRun) : scorePatch(task, patch, deps, opts),
  };
  const registry = new SuiteRegistry([suite]);
  registry.enable('lost-gold');
  const own = await makeGym({ registry });
  try {
    const task = pythonTask({
      id: 'sound',
      suite: 'lost-gold',
      files: { 'calc.py': 'def add(a, b):\n    raise NotImplementedError\n' },
      hidden: TESTS,
      solution: { files: GOLD },
    });
    const v = await validateTask(own.gym, task);
    assert.equal(v.status, 'error', v.reasons.join('; '));
    assert.match(
      v.reasons.join('; '),
      /^gold: HARNESS_FAILED_AFTER_CANDIDATE: the scoring sandbox failed twice .*: an infrastructure reason, not an invalid task$/,
    );
    assert.equal(v.gold?.status, 'failed', 'strict scoring counted it failed');
  } finally {
    await own.cleanup();
  }
});
