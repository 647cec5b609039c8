import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { GymError } from '../../src/errors.ts';
import type { PreparedEnv } from '../../src/env/types.ts';
import type { ApplyPatchOptions, PatchApplied, Sandbox, SandboxFactory } from '../../src/sandbox/types.ts';
import { scoreInFreshSandbox, type ScoringSteps } from '../../src/scoring/pipeline.ts';
import type { TestRun } from '../../src/scoring/runners.ts';
import { pythonTask } from '../helpers.ts';

const task = pythonTask({ id: 'pipe', files: { 'a.py': 'x = 1\n' } });

const ENV: PreparedEnv = { key: 'k', kind: 'python', path: [], vars: {}, readOnlyPaths: [], command: 'python', notes: ['env note'] };

/** A factory whose sandbox only applies patches, as told: the steps under test do the rest. */
function factory(apply: (patch: string, opts?: ApplyPatchOptions) => PatchApplied, seen: { applyOpts?: ApplyPatchOptions; destroyed: number }): SandboxFactory {
  return {
    backend: 'local',
    prepare: async () => ENV,
    close: async () => {},
    create: async () =>
      ({
        applyPatch: async (patch: string, opts?: ApplyPatchOptions) => {
          seen.applyOpts = opts;
          return apply(patch, opts);
        },
        destroy: async () => {
          seen.destroyed++;
        },
      }) as unknown as Sandbox,
  };
}

const RUN: TestRun = {
  command: 'true',
  exec: { exitCode: 0, stdout: 'ok', stderr: '', timedOut: false, truncated: { stdout: 0, stderr: 0 }, totalBytes: { stdout: 2, stderr: 0 }, durationMs: 1 },
  tests: [{ name: 'script', status: 'passed' }],
  log: 'ok',
};

function steps(over: Partial<ScoringSteps> = {}): ScoringSteps {
  return {
    patch: { failedNote: 'PATCH_APPLY_FAILED: no' },
    running: 'running',
    layDownTests: async () => {},
    runTests: async () => RUN,
    decide: ({ notes }, run) => ({ reward: 1, status: 'passed', tests: run.tests, notes: [...notes] }),
    ...over,
  };
}

describe('the scoring pipeline', () => {
  test('the steps run in order; the verdict carries the env notes and the log is kept', async () => {
    const logDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-pipeline-'));
    try {
      const order: string[] = [];
      const seen = { destroyed: 0 };
      const v = await scoreInFreshSandbox(task, 'the patch', { sandboxes: factory(() => ({ ok: true, method: 'git apply', log: 'applied' }), seen), logDir }, { progress: (m) => order.push(`progress ${m}`) }, () =>
        steps({
          readStartState: async (run) => {
            order.push('start');
            run.patch = 'rewritten';
          },
          layDownTests: async () => void order.push('lay down'),
          runTests: async (run) => (order.push(`run ${run.patch}`), RUN),
        }),
      );
      assert.deepEqual(order, ['progress preparing the environment', 'progress laying out a fresh sandbox', 'start', 'lay down', 'progress running', 'run rewritten']);
      assert.equal(v.status, 'passed');
      assert.deepEqual(v.notes, ['env note']);
      assert.equal(seen.destroyed, 1);
      assert.match(await fs.readFile(v.logRef!, 'utf8'), /apply \(git apply\):\napplied\nBENCHGYM_APPLIED git apply\n\$ true\nexit 0\nok/);
    } finally {
      await fs.rm(logDir, { recursive: true, force: true });
    }
  });

  test('the chain is passed to the sandbox as data; a fallback is noted when asked; no method: the suite\'s note, and the log says so', async () => {
    const chain = [{ kind: 'git-apply' as const }, { kind: 'patch' as const, fuzz: 5 }];
    const seen: { applyOpts?: ApplyPatchOptions; destroyed: number } = { destroyed: 0 };
    const fallback = await scoreInFreshSandbox(task, 'p', { sandboxes: factory(() => ({ ok: true, method: 'patch --fuzz=5', log: '' }), seen) }, {}, () => steps({ patch: { chain, resetBetweenTries: true, failedNote: 'x', noteFallback: true } }));
    assert.deepEqual(seen.applyOpts, { chain, resetBetweenTries: true });
    assert.ok(fallback.notes.includes('patch applied with patch --fuzz=5'), fallback.notes.join('; '));
    const first = await scoreInFreshSandbox(task, 'p', { sandboxes: factory(() => ({ ok: true, method: 'git apply', log: '' }), seen) }, {}, () => steps({ patch: { chain, failedNote: 'x', noteFallback: true } }));
    assert.ok(!first.notes.some((n) => /patch applied with/.test(n)));
    const generic = await scoreInFreshSandbox(task, 'p', { sandboxes: factory(() => ({ ok: true, method: 'git apply --recount', log: '' }), seen) }, {}, () => steps());
    assert.equal(seen.applyOpts, undefined, 'no chain: the sandbox default');
    assert.ok(!generic.notes.some((n) => /patch applied with/.test(n)));

    const logDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-pipeline-'));
    try {
      let ran = false;
      const failed = await scoreInFreshSandbox(task, 'p', { sandboxes: factory(() => ({ ok: false, log: 'nothing' }), seen), logDir }, {}, () =>
        steps({ patch: { chain, failedNote: 'PATCH_APPLY_FAILED: none of them' }, layDownTests: async () => void (ran = true) }),
      );
      assert.deepEqual([failed.status, failed.reward, failed.notes, ran], ['failed', 0, ['env note', 'PATCH_APPLY_FAILED: none of them'], false]);
      assert.match(await fs.readFile(failed.logRef!, 'utf8'), /apply \(failed\):\nnothing\nBENCHGYM_APPLIED none\n/);
    } finally {
      await fs.rm(logDir, { recursive: true, force: true });
    }
  });

  test('a patch the sandbox refused: a wrong answer whose notes say why before the suite\'s note; nothing after the apply runs', async () => {
    const seen = { destroyed: 0 };
    let ran = false;
    const refused = 'the patch writes \'.git/hooks/post-checkout\': inside a .git, which no patch may create or change';
    const v = await scoreInFreshSandbox(task, 'p', { sandboxes: factory(() => ({ ok: false, refused, log: `@@refused ${refused}` }), seen) }, {}, () =>
      steps({ patch: { failedNote: 'PATCH_APPLY_FAILED: no' }, layDownTests: async () => void (ran = true) }),
    );
    assert.deepEqual([v.status, v.reward, v.error, v.notes, ran], ['failed', 0, undefined, ['env note', `PATCH_REFUSED: ${refused}`, 'PATCH_APPLY_FAILED: no'], false]);
    assert.equal(seen.destroyed, 1);
  });

  test("what the candidate's files cause while the tests are laid down is a wrong answer; the same error elsewhere is the harness's", async () => {
    const seen = { destroyed: 0 };
    const sandboxes = factory(() => ({ ok: true, method: 'git apply', log: '' }), seen);
    const refused = new GymError('NOT_A_FILE', 'is a directory', { candidate: true, path: 'tests/x.py' });
    const wrong = await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () => steps({ layDownTests: async () => Promise.reject(refused) }));
    assert.deepEqual([wrong.status, wrong.reward, wrong.error], ['failed', 0, undefined]);
    assert.ok(wrong.notes.includes('CANDIDATE_FILE_REFUSED: tests/x.py is a directory'), wrong.notes.join('; '));
    const harness = await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () => steps({ runTests: async () => Promise.reject(refused) }));
    assert.deepEqual([harness.status, harness.error?.code], ['error', 'INTERNAL']);
    assert.equal(seen.destroyed, 2, 'every scoring sandbox is destroyed');
  });

  test('harness failures are classified one way: infrastructure codes and TASK_INVALID kept, the rest INTERNAL; CANCELLED is thrown', async () => {
    const seen = { destroyed: 0 };
    const sandboxes = factory(() => ({ ok: true, method: 'git apply', log: '' }), seen);
    const codeOf = async (err: Error) => (await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () => steps({ layDownTests: async () => Promise.reject(err) }))).error?.code;
    assert.equal(await codeOf(new GymError('SANDBOX_UNAVAILABLE', 'lost')), 'SANDBOX_UNAVAILABLE');
    assert.equal(await codeOf(new GymError('TASK_INVALID', 'the test patch does not apply')), 'TASK_INVALID');
    assert.equal(await codeOf(new Error('boom')), 'INTERNAL');
    const invalid = await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () => {
      throw new GymError('TASK_INVALID', 'no test patch');
    });
    assert.deepEqual([invalid.status, invalid.error?.code, invalid.notes], ['error', 'TASK_INVALID', []]);
    await assert.rejects(
      scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () => steps({ runTests: async () => Promise.reject(new GymError('CANCELLED', 'stop')) })),
      (e: GymError) => e.code === 'CANCELLED',
    );
  });
});
