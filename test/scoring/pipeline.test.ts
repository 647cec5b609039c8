import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { GymError } from '../../src/errors.ts';
import type { PreparedEnv } from '../../src/env/types.ts';
import type { ApplyPatchOptions, PatchApplied, Sandbox, SandboxFactory } from '../../src/sandbox/types.ts';
import { FAILED_AFTER_CANDIDATE_NOTE, RESCORED_NOTE } from '../../src/scoring/after_candidate.ts';
import { scoreInFreshSandbox, type ScoringSteps } from '../../src/scoring/pipeline.ts';
import type { TestRun } from '../../src/scoring/runners.ts';
import { pythonTask } from '../helpers.ts';

const task = pythonTask({ id: 'pipe', files: { 'a.py': 'x = 1\n' } });

const ENV: PreparedEnv = { key: 'k', kind: 'python', path: [], vars: {}, readOnlyPaths: [], command: 'python', notes: ['env note'] };

/** A factory whose sandbox only applies patches, as told: the steps under test do the rest. */
function factory(
  apply: (patch: string, opts?: ApplyPatchOptions) => PatchApplied,
  seen: { applyOpts?: ApplyPatchOptions; destroyed: number; created?: number },
): SandboxFactory {
  return {
    backend: 'local',
    prepare: async () => ENV,
    close: async () => {},
    create: async () => {
      seen.created = (seen.created ?? 0) + 1;
      return {
        applyPatch: async (patch: string, opts?: ApplyPatchOptions) => {
          seen.applyOpts = opts;
          return apply(patch, opts);
        },
        destroy: async () => {
          seen.destroyed++;
        },
      } as unknown as Sandbox;
    },
  };
}

const RUN: TestRun = {
  command: 'true',
  exec: {
    exitCode: 0,
    stdout: 'ok',
    stderr: '',
    timedOut: false,
    truncated: { stdout: 0, stderr: 0 },
    totalBytes: { stdout: 2, stderr: 0 },
    durationMs: 1,
  },
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
      const v = await scoreInFreshSandbox(
        task,
        'the patch',
        { sandboxes: factory(() => ({ ok: true, method: 'git apply', log: 'applied' }), seen), logDir },
        { progress: (m) => order.push(`progress ${m}`) },
        () =>
          steps({
            readStartState: async (run) => {
              order.push('start');
              run.patch = 'rewritten';
            },
            layDownTests: async () => void order.push('lay down'),
            runTests: async (run) => (order.push(`run ${run.patch}`), RUN),
          }),
      );
      assert.deepEqual(order, [
        'progress preparing the environment',
        'progress laying out a fresh sandbox',
        'start',
        'lay down',
        'progress running',
        'run rewritten',
      ]);
      assert.equal(v.status, 'passed');
      assert.deepEqual(v.notes, ['env note']);
      assert.equal(seen.destroyed, 1);
      assert.match(await fs.readFile(v.logRef!, 'utf8'), /apply \(git apply\):\napplied\nBENCHGYM_APPLIED git apply\n\$ true\nexit 0\nok/);
    } finally {
      await fs.rm(logDir, { recursive: true, force: true });
    }
  });

  test(
    'the chain is passed to the sandbox as data; a fallback is noted ' + "when asked; no method: the suite's note, and the log says so",
    async () => {
      const chain = [{ kind: 'git-apply' as const }, { kind: 'patch' as const, fuzz: 5 }];
      const seen: { applyOpts?: ApplyPatchOptions; destroyed: number } = { destroyed: 0 };
      const fallback = await scoreInFreshSandbox(
        task,
        'p',
        { sandboxes: factory(() => ({ ok: true, method: 'patch --fuzz=5', log: '' }), seen) },
        {},
        () => steps({ patch: { chain, resetBetweenTries: true, failedNote: 'x', noteFallback: true } }),
      );
      assert.deepEqual(seen.applyOpts, { chain, resetBetweenTries: true });
      assert.ok(fallback.notes.includes('patch applied with patch --fuzz=5'), fallback.notes.join('; '));
      const first = await scoreInFreshSandbox(
        task,
        'p',
        { sandboxes: factory(() => ({ ok: true, method: 'git apply', log: '' }), seen) },
        {},
        () => steps({ patch: { chain, failedNote: 'x', noteFallback: true } }),
      );
      assert.ok(!first.notes.some((n) => /patch applied with/.test(n)));
      const generic = await scoreInFreshSandbox(
        task,
        'p',
        { sandboxes: factory(() => ({ ok: true, method: 'git apply --recount', log: '' }), seen) },
        {},
        () => steps(),
      );
      assert.equal(seen.applyOpts, undefined, 'no chain: the sandbox default');
      assert.ok(!generic.notes.some((n) => /patch applied with/.test(n)));

      const logDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-pipeline-'));
      try {
        let ran = false;
        const failed = await scoreInFreshSandbox(
          task,
          'p',
          { sandboxes: factory(() => ({ ok: false, log: 'nothing' }), seen), logDir },
          {},
          () => steps({ patch: { chain, failedNote: 'PATCH_APPLY_FAILED: none of them' }, layDownTests: async () => void (ran = true) }),
        );
        assert.deepEqual(
          [failed.status, failed.reward, failed.notes, ran],
          ['failed', 0, ['env note', 'PATCH_APPLY_FAILED: none of them'], false],
        );
        assert.match(await fs.readFile(failed.logRef!, 'utf8'), /apply \(failed\):\nnothing\nBENCHGYM_APPLIED none\n/);
      } finally {
        await fs.rm(logDir, { recursive: true, force: true });
      }
    },
  );

  test(
    'a patch the sandbox refused: a wrong answer whose notes say ' + "why before the suite's note; nothing after the apply runs",
    async () => {
      const seen = { destroyed: 0 };
      let ran = false;
      const refused = "the patch writes '.git/hooks/post-checkout': inside a .git, which no patch may create or change";
      const v = await scoreInFreshSandbox(
        task,
        'p',
        { sandboxes: factory(() => ({ ok: false, refused, log: `@@refused ${refused}` }), seen) },
        {},
        () => steps({ patch: { failedNote: 'PATCH_APPLY_FAILED: no' }, layDownTests: async () => void (ran = true) }),
      );
      assert.deepEqual(
        [v.status, v.reward, v.error, v.notes, ran],
        ['failed', 0, undefined, ['env note', `PATCH_REFUSED: ${refused}`, 'PATCH_APPLY_FAILED: no'], false],
      );
      assert.equal(seen.destroyed, 1);
    },
  );

  test(
    "what the candidate's files cause while the tests are laid down " + "is a wrong answer; the same error elsewhere is the harness's",
    async () => {
      const seen = { destroyed: 0 };
      const sandboxes = factory(() => ({ ok: true, method: 'git apply', log: '' }), seen);
      const refused = new GymError('NOT_A_FILE', 'is a directory', { candidate: true, path: 'tests/x.py' });
      const wrong = await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () =>
        steps({ layDownTests: async () => Promise.reject(refused) }),
      );
      assert.deepEqual([wrong.status, wrong.reward, wrong.error], ['failed', 0, undefined]);
      assert.ok(wrong.notes.includes('CANDIDATE_FILE_REFUSED: tests/x.py is a directory'), wrong.notes.join('; '));
      // Faithful: the harness's error (after one retry in a fresh sandbox: the tests had begun to run).
      const harness = await scoreInFreshSandbox(task, 'p', { sandboxes }, { scoring: 'faithful' }, () =>
        steps({ runTests: async () => Promise.reject(refused) }),
      );
      assert.deepEqual([harness.status, harness.error?.code], ['error', 'INTERNAL']);
      assert.equal(seen.destroyed, 3, 'every scoring sandbox is destroyed');
    },
  );

  test(
    'harness failures are classified one way: infrastructure codes ' + 'and TASK_INVALID kept, the rest INTERNAL; CANCELLED is thrown',
    async () => {
      const seen = { destroyed: 0 };
      const sandboxes = factory(() => ({ ok: true, method: 'git apply', log: '' }), seen);
      const codeOf = async (err: Error) =>
        (await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () => steps({ layDownTests: async () => Promise.reject(err) }))).error
          ?.code;
      assert.equal(await codeOf(new GymError('SANDBOX_UNAVAILABLE', 'lost')), 'SANDBOX_UNAVAILABLE');
      assert.equal(await codeOf(new GymError('TASK_INVALID', 'the test patch does not apply')), 'TASK_INVALID');
      assert.equal(await codeOf(new Error('boom')), 'INTERNAL');
      const invalid = await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () => {
        throw new GymError('TASK_INVALID', 'no test patch');
      });
      assert.deepEqual([invalid.status, invalid.error?.code, invalid.notes], ['error', 'TASK_INVALID', []]);
      await assert.rejects(
        scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () =>
          steps({ runTests: async () => Promise.reject(new GymError('CANCELLED', 'stop')) }),
        ),
        (e: GymError) => e.code === 'CANCELLED',
      );
    },
  );

  describe("a harness failure after the candidate's code began to run", () => {
    const lost = () => new GymError('SANDBOX_UNAVAILABLE', 'the executor was killed by SIGKILL', { sandboxLost: true });
    /** Steps whose test run fails on the attempts listed (1-based), and passes on the others. */
    const failingRuns = (failOn: number[], err: () => Error = lost) => {
      let attempt = 0;
      return () => steps({ runTests: async () => (failOn.includes(++attempt) ? Promise.reject(err()) : RUN) });
    };
    const applying = (seen: { destroyed: number; created?: number }) => factory(() => ({ ok: true, method: 'git apply', log: '' }), seen);
    const withLog = async (fn: (logDir: string) => Promise<void>) => {
      const logDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-pipeline-'));
      try {
        await fn(logDir);
      } finally {
        await fs.rm(logDir, { recursive: true, force: true });
      }
    };

    test(
      'strict: scored again once in a fresh sandbox; a second failure ' + 'is failed, reward 0, with a note naming both; the log tells it',
      async () => {
        await withLog(async (logDir) => {
          const seen = { destroyed: 0, created: 0 };
          const progress: string[] = [];
          const opts = { scoring: 'strict' as const, progress: (m: string) => progress.push(m) };
          const v = await scoreInFreshSandbox(task, 'p', { sandboxes: applying(seen), logDir }, opts, failingRuns([1, 2]));
          assert.deepEqual([v.status, v.reward, v.error, v.tests], ['failed', 0, undefined, []]);
          const note = v.notes.find((n) => n.startsWith(`${FAILED_AFTER_CANDIDATE_NOTE}:`));
          assert.ok(note, v.notes.join('; '));
          const both = /\(1st SANDBOX_UNAVAILABLE: the executor was killed by SIGKILL; 2nd SANDBOX_UNAVAILABLE: .*\)/.source;
          assert.match(
            note,
            new RegExp(`failed twice after the candidate's code began to run ${both}: counted against the solution \\(strict scoring\\)`),
          );
          assert.equal(v.notes.filter((n) => n === 'env note').length, 1, 'the notes of the second scoring only');
          assert.deepEqual([seen.created, seen.destroyed], [2, 2], 'two sandboxes, both destroyed');
          assert.ok(
            progress.some((m) => /scoring again in a fresh sandbox/.test(m)),
            progress.join('; '),
          );
          const log = await fs.readFile(v.logRef!, 'utf8');
          assert.match(log, /error SANDBOX_UNAVAILABLE after the candidate's code began to run: the executor was killed by SIGKILL\n/);
          assert.match(
            log,
            new RegExp(
              String.raw`\nthe harness failed after the candidate's code began to run: scoring again once, in a fresh ` +
                String.raw`sandbox\n--- scoring attempt 2 ---\n`,
            ),
          );
          assert.match(log, /outcome: HARNESS_FAILED_AFTER_CANDIDATE: .*counted against the solution/);
        });
      },
    );

    test('faithful: a second failure stays an infrastructure error, its note saying it was retried', async () => {
      const seen = { destroyed: 0, created: 0 };
      const v = await scoreInFreshSandbox(task, 'p', { sandboxes: applying(seen) }, { scoring: 'faithful' }, failingRuns([1, 2]));
      assert.deepEqual([v.status, v.reward, v.error?.code], ['error', 0, 'SANDBOX_UNAVAILABLE']);
      assert.ok(
        v.notes.some((n) => n.startsWith(`${FAILED_AFTER_CANDIDATE_NOTE}:`) && /an infrastructure error \(faithful scoring/.test(n)),
        v.notes.join('; '),
      );
      assert.equal(seen.created, 2);
    });

    test(
      'a second scoring that decides gives its verdict, noted as a ' + 'rescoring; the decide step counts as after the candidate ran',
      async () => {
        const seen = { destroyed: 0, created: 0 };
        const sandboxes = factory(() => ({ ok: true, method: 'git apply', log: '' }), seen);
        const v = await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, failingRuns([1]));
        assert.deepEqual([v.status, v.reward], ['passed', 1]);
        const rescored =
          `${RESCORED_NOTE}: the first scoring sandbox failed after ` + `the candidate's code began to run (SANDBOX_UNAVAILABLE: `;
        assert.ok(
          v.notes.some((n) => n.startsWith(rescored)),
          v.notes.join('; '),
        );
        let decisions = 0;
        const decide: ScoringSteps['decide'] = (_, run) =>
          ++decisions === 1
            ? Promise.reject(new Error('the report vanished'))
            : { reward: 0, status: 'failed', tests: run.tests, notes: [] };
        const inDecide = await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () => steps({ decide }));
        assert.deepEqual([inDecide.status, decisions], ['failed', 2]);
        assert.ok(
          inDecide.notes.some((n) => n.includes('(INTERNAL: the report vanished)')),
          inDecide.notes.join('; '),
        );
      },
    );

    test('errors before the candidate ran (env, sandbox, start state, laying down the tests) stay errors and are not retried', async () => {
      const seen = { destroyed: 0, created: 0 };
      const sandboxes = factory(() => ({ ok: true, method: 'git apply', log: '' }), seen);
      const strict = { scoring: 'strict' as const };
      const early = await scoreInFreshSandbox(task, 'p', { sandboxes }, strict, () =>
        steps({ layDownTests: async () => Promise.reject(lost()) }),
      );
      assert.deepEqual([early.status, early.error?.code, seen.created], ['error', 'SANDBOX_UNAVAILABLE', 1]);
      const start = await scoreInFreshSandbox(task, 'p', { sandboxes }, strict, () =>
        steps({ readStartState: async () => Promise.reject(lost()) }),
      );
      assert.deepEqual([start.status, seen.created], ['error', 2]);
      const noSandbox: SandboxFactory = { ...sandboxes, create: async () => Promise.reject(new GymError('CAPACITY', 'no container slot')) };
      const capacity = await scoreInFreshSandbox(task, 'p', { sandboxes: noSandbox }, {}, () => steps());
      assert.deepEqual([capacity.status, capacity.error?.code], ['error', 'CAPACITY']);
      assert.ok(!capacity.notes.some((n) => n.startsWith(RESCORED_NOTE) || n.startsWith(FAILED_AFTER_CANDIDATE_NOTE)));
    });

    test("a second sandbox that fails before the candidate ran is the infrastructure's error; TASK_INVALID is never retried", async () => {
      const seen = { destroyed: 0, created: 0 };
      const sandboxes = factory(() => ({ ok: true, method: 'git apply', log: '' }), seen);
      let creates = 0;
      const noSlot = () => Promise.reject(new GymError('CAPACITY', 'no container slot'));
      const flaky: SandboxFactory = { ...sandboxes, create: async (spec) => (++creates === 2 ? noSlot() : sandboxes.create(spec)) };
      const v = await scoreInFreshSandbox(task, 'p', { sandboxes: flaky }, { scoring: 'strict' }, failingRuns([1]));
      assert.deepEqual([v.status, v.error?.code], ['error', 'CAPACITY']);
      assert.ok(
        v.notes.some((n) => n.startsWith(`${RESCORED_NOTE}:`) && /the second failed before it ran: an infrastructure error/.test(n)),
        v.notes.join('; '),
      );
      const taskInvalid = () => new GymError('TASK_INVALID', 'the test patch does not apply');
      const invalid = await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, failingRuns([1, 2], taskInvalid));
      assert.deepEqual([invalid.status, invalid.error?.code], ['error', 'TASK_INVALID']);
      assert.ok(!invalid.notes.some((n) => n.startsWith(RESCORED_NOTE)), 'not scored again');
      // Lost first, then a code no candidate causes: the infrastructure's error, noted.
      let runs = 0;
      const lostThenInvalid = await scoreInFreshSandbox(task, 'p', { sandboxes }, {}, () =>
        steps({ runTests: async () => Promise.reject(++runs === 1 ? lost() : taskInvalid()) }),
      );
      assert.deepEqual([lostThenInvalid.status, lostThenInvalid.error?.code], ['error', 'TASK_INVALID']);
      const noted = /the second failed with TASK_INVALID, which no candidate causes: an infrastructure error$/;
      assert.ok(
        lostThenInvalid.notes.some((n) => noted.test(n)),
        lostThenInvalid.notes.join('; '),
      );
    });

    test('CANCELLED is thrown, never retried', async () => {
      const seen = { destroyed: 0, created: 0 };
      await assert.rejects(
        scoreInFreshSandbox(
          task,
          'p',
          { sandboxes: applying(seen) },
          {},
          failingRuns([1, 2], () => new GymError('CANCELLED', 'stop')),
        ),
        (e: GymError) => e.code === 'CANCELLED',
      );
      assert.deepEqual([seen.created, seen.destroyed], [1, 1]);
      let runs = 0;
      await assert.rejects(
        scoreInFreshSandbox(task, 'p', { sandboxes: applying(seen) }, {}, () =>
          steps({ runTests: async () => Promise.reject(++runs === 1 ? lost() : new GymError('CANCELLED', 'stop')) }),
        ),
        (e: GymError) => e.code === 'CANCELLED',
        'cancelled during the retry',
      );
    });
  });
});
