import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Gym } from '../../src/episode/gym.ts';
import { GymError } from '../../src/errors.ts';
import { git } from '../../src/repo/index.ts';
import { DockerSandboxFactory } from '../../src/sandbox/docker/index.ts';
import { bubblewrapAvailable } from '../../src/sandbox/local/index.ts';
import type { Sandbox, SandboxFactory } from '../../src/sandbox/types.ts';
import { scorePatch } from '../../src/scoring/scorer.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { makeGym, pythonTask, startExample, tempDir, testContext } from '../helpers.ts';
import { dockerSkipReason } from '../sandbox/docker/skip.ts';

/**
 * What the candidate's files cause is a wrong answer, never an infrastructure error: links
 * out of the workspace, directories, FIFOs and hard links where the harness lays down test
 * files are removed (never followed) and named in a note, the hidden tests still run as the
 * task defines them, and the verdict is `failed`. Only the harness's own failures are `error`.
 */

const START = {
  'calc.py': 'def add(a, b):\n    return a - b\n',
  'tests/conftest.py': '# shared fixtures\n',
};
const FIXED = 'def add(a, b):\n    return a + b\n';
const HIDDEN = {
  'tests/test_calc.py':
    'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n',
};
const task: Task = pythonTask({
  id: 'candidate-files',
  files: START,
  hidden: HIDDEN,
  tests: { hidden: { runner: { type: 'pytest', args: ['tests'] }, files: HIDDEN, timeoutMs: 60_000 } },
});

let outside: string;
let scratch: string;

/** A patch from the start state to what `change` makes of it, as git writes it (symbolic links as mode 120000). */
async function patchOf(change: (dir: string) => Promise<void>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(scratch, 'repo-'));
  for (const [rel, content] of Object.entries(START)) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), content);
  }
  await git(['init', '-q'], { cwd: dir });
  await git(['add', '-A'], { cwd: dir });
  await git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'start'], { cwd: dir });
  await change(dir);
  await git(['add', '-A'], { cwd: dir });
  return git(['diff', '--cached', '--binary', 'HEAD'], { cwd: dir });
}

/** The factory, with `then` run in each scoring sandbox right after the patch is applied (states no patch can make). */
function afterPatch(inner: SandboxFactory, then: (sb: Sandbox) => Promise<void>): SandboxFactory {
  return {
    backend: inner.backend,
    prepare: (t) => inner.prepare(t),
    close: async () => {},
    create: async (opts) => {
      const sb = await inner.create(opts);
      const apply = sb.applyPatch.bind(sb);
      sb.applyPatch = async (p) => {
        const r = await apply(p);
        await then(sb);
        return r;
      };
      return sb;
    },
  };
}

function show(v: Verdict): string {
  return JSON.stringify({
    status: v.status,
    reward: v.reward,
    notes: v.notes,
    error: v.error,
    tests: v.tests.map((t) => `${t.name} ${t.status}`),
  });
}

/** A wrong answer with a note naming the path: never `error`. */
function assertRefused(v: Verdict, rel: string, what: RegExp): void {
  assert.equal(v.status, 'failed', show(v));
  assert.equal(v.reward, 0);
  assert.equal(v.error, undefined, show(v));
  const note = v.notes.find((n) => n.startsWith(`CANDIDATE_FILE_REFUSED: ${rel} `));
  assert.ok(note, `no CANDIDATE_FILE_REFUSED note for ${rel}: ${show(v)}`);
  assert.match(note, what);
}

/** The hidden tests were laid down as the task defines them and ran against the (unfixed) code. */
function assertHiddenRan(v: Verdict): void {
  assert.deepEqual(
    v.tests.map((t) => [t.name, t.status]),
    [
      ['tests/test_calc.py::test_add', 'failed'],
      ['tests/test_calc.py::test_zero', 'passed'],
    ],
    show(v),
  );
}

before(async () => {
  scratch = await tempDir('benchgym-cand-');
  outside = await tempDir('benchgym-outside-');
  await fs.writeFile(path.join(outside, 'test_calc.py'), 'def test_add():\n    pass\n');
  await fs.writeFile(path.join(outside, 'conftest.py'), 'raise SystemExit("the outside conftest ran")\n');
  await fs.writeFile(path.join(outside, 'sentinel'), 'untouched\n');
});
after(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
  await fs.rm(outside, { recursive: true, force: true });
});

async function outsideUntouched(): Promise<void> {
  assert.deepEqual((await fs.readdir(outside)).sort(), ['conftest.py', 'sentinel', 'test_calc.py']);
  assert.equal(await fs.readFile(path.join(outside, 'test_calc.py'), 'utf8'), 'def test_add():\n    pass\n');
  assert.equal(await fs.readFile(path.join(outside, 'sentinel'), 'utf8'), 'untouched\n');
}

interface Backend {
  name: string;
  skip: () => Promise<string | null>;
  gym: () => Promise<{ gym: Gym; cleanup: () => Promise<void> }>;
  /** Host paths are the sandbox's (link targets, hard links, the outside directory). */
  local: boolean;
}

const BACKENDS: Backend[] = [
  { name: 'local, without bubblewrap', skip: async () => null, gym: () => makeGym({ isolation: 'none' }), local: true },
  {
    name: 'local, under bubblewrap',
    skip: async () => ((await bubblewrapAvailable()) ? null : 'bubblewrap is not available'),
    gym: () => makeGym({ isolation: 'bwrap' }),
    local: true,
  },
  {
    name: 'docker',
    skip: () => dockerSkipReason(),
    gym: () => makeGym({ sandboxes: new DockerSandboxFactory({ serverId: `test-cand-${randomBytes(4).toString('hex')}`, poolSize: 0 }) }),
    local: false,
  },
];

for (const backend of BACKENDS) {
  describe(`candidate files are a wrong answer (${backend.name})`, () => {
    let gym: Gym | undefined;
    let cleanup: (() => Promise<void>) | undefined;
    let skip: string | null = null;
    before(async () => {
      skip = await backend.skip();
      if (!skip) ({ gym, cleanup } = await backend.gym());
    });
    after(() => cleanup?.());
    const score = (patch: string, sandboxes?: SandboxFactory) => scorePatch(task, patch, { sandboxes: sandboxes ?? gym!.sandboxes });
    const it = (name: string, fn: () => Promise<void>, opts: { timeout?: number; localOnly?: boolean } = {}) =>
      test(name, { timeout: opts.timeout ?? 180_000 }, async (t) => {
        if (skip) return t.skip(skip);
        if (opts.localOnly && !backend.local) return t.skip('needs host paths inside the sandbox (local backend)');
        await fn();
      });

    it('a symbolic link out of the workspace at a conftest path (dangling): removed, noted, failed', async () => {
      const patch = await patchOf(async (dir) => {
        await fs.rm(path.join(dir, 'tests/conftest.py'));
        await fs.symlink('/nonexistent-benchgym/conftest.py', path.join(dir, 'tests/conftest.py'));
      });
      assert.match(patch, /new file mode 120000/);
      const v = await score(patch);
      assertRefused(v, 'tests/conftest.py', /symbolic link out of the workspace/);
      assertHiddenRan(v);
    });

    it(
      'a symbolic link out of the workspace at a conftest path the start ' +
        'state lacks, to a conftest that exists: removed before pytest runs',
      async () => {
        const v = await score(await patchOf((dir) => fs.symlink(path.join(outside, 'conftest.py'), path.join(dir, 'conftest.py'))));
        assertRefused(v, 'conftest.py', /symbolic link out of the workspace/);
        assertHiddenRan(v);
      },
    );

    it(
      "a symbolic link out of the workspace at the hidden test file's " +
        'path: removed, the hidden file laid down, nothing written outside',
      async () => {
        const v = await score(await patchOf((dir) => fs.symlink(path.join(outside, 'test_calc.py'), path.join(dir, 'tests/test_calc.py'))));
        assertRefused(v, 'tests/test_calc.py', /symbolic link out of the workspace/);
        assertHiddenRan(v);
        await outsideUntouched();
      },
    );

    it(
      'a directory on the way to the hidden test file is a symbolic link ' +
        'out (tests -> outside): removed, noted, nothing written outside',
      async () => {
        const patch = await patchOf(async (dir) => {
          await fs.rm(path.join(dir, 'tests'), { recursive: true });
          await fs.symlink(outside, path.join(dir, 'tests'));
        });
        const v = await score(patch);
        assertRefused(v, 'tests', /symbolic link out of the workspace/);
        assertHiddenRan(v);
        await outsideUntouched();
      },
    );

    it('a directory where the hidden test file should be: removed, noted, failed', async () => {
      const patch = await patchOf(async (dir) => {
        await fs.mkdir(path.join(dir, 'tests/test_calc.py'), { recursive: true });
        await fs.writeFile(path.join(dir, 'tests/test_calc.py/keep.txt'), 'x\n');
      });
      const v = await score(patch);
      assertRefused(v, 'tests/test_calc.py', /directory/);
      assertHiddenRan(v);
    });

    it(
      'a symbolic link out of the workspace where the harness keeps ' + "pytest's start-state configuration: removed, noted, failed",
      async () => {
        const v = await score(await patchOf((dir) => fs.symlink(outside, path.join(dir, '.benchgym-pristine-pytest.ini'))));
        assertRefused(v, '.benchgym-pristine-pytest.ini', /symbolic link out of the workspace/);
        assertHiddenRan(v);
        await outsideUntouched();
      },
    );

    it('a symbolic link out of the workspace where pytest writes its report: removed before the run, nothing written outside', async () => {
      const v = await score(await patchOf((dir) => fs.symlink(outside, path.join(dir, '.benchgym-reports'))));
      assert.equal(v.status, 'failed', show(v));
      assert.equal(v.error, undefined, show(v));
      assertHiddenRan(v);
      await outsideUntouched();
    });

    it('the fix plus a symbolic link out at a conftest path still passes: the link is neutralised, not the answer', async () => {
      const patch = await patchOf(async (dir) => {
        await fs.writeFile(path.join(dir, 'calc.py'), FIXED);
        await fs.rm(path.join(dir, 'tests/conftest.py'));
        await fs.symlink('/nonexistent-benchgym/conftest.py', path.join(dir, 'tests/conftest.py'));
      });
      const v = await score(patch);
      assert.equal(v.status, 'passed', show(v));
      assert.equal(v.reward, 1);
      assert.ok(
        v.notes.some((n) => n.startsWith('CANDIDATE_FILE_REFUSED: tests/conftest.py ')),
        show(v),
      );
    });

    it('a symbolic link out of the workspace elsewhere (not a test path) is the code under test: failed, never an error', async () => {
      const v = await score(await patchOf((dir) => fs.symlink('/etc/hostname', path.join(dir, 'hostname.txt'))));
      assert.equal(v.status, 'failed', show(v));
      assert.equal(v.error, undefined);
      assertHiddenRan(v);
    });

    it('a binary patch that cannot be applied: failed with PATCH_APPLY_FAILED', async () => {
      const patch = [
        'diff --git a/blob.bin b/blob.bin',
        'new file mode 100644',
        'index 0000000000000000000000000000000000000000..1111111111111111111111111111111111111111',
        'GIT binary patch',
        'literal 12',
        'zcmZ?wbhEHbRA2x9{{R1H!',
        '',
        'literal 0',
        'HcmV?d00001',
        '',
      ].join('\n');
      const v = await score(patch);
      assert.equal(v.status, 'failed', show(v));
      assert.equal(v.reward, 0);
      assert.equal(v.error, undefined);
      assert.ok(
        v.notes.some((n) => /^PATCH_APPLY_FAILED/.test(n)),
        show(v),
      );
    });

    it(
      "FIFOs at a conftest path and at the hidden test file's path: removed (never opened), noted, failed; the scorer does not stall",
      async () => {
        const sandboxes = afterPatch(gym!.sandboxes, async (sb) => {
          const r = await sb.exec(
            'mkfifo tests/conftest.py.new && mv tests/conftest.py.new tests/conftest.py && mkfifo tests/test_calc.py && mkfifo pytest.ini',
          );
          assert.equal(r.exitCode, 0, r.stderr);
        });
        const v = await score('', sandboxes);
        assertRefused(v, 'tests/conftest.py', /special file/);
        assertRefused(v, 'tests/test_calc.py', /special file/);
        assertRefused(v, 'pytest.ini', /special file/);
        assertHiddenRan(v);
      },
      { timeout: 120_000 },
    );

    it(
      "a hard link to a file outside at the hidden test file's path: replaced, the outside file unchanged",
      async () => {
        const sandboxes = afterPatch(gym!.sandboxes, async (sb) => {
          await fs.link(path.join(outside, 'test_calc.py'), path.join(sb.workdir, 'tests', 'test_calc.py'));
        });
        const v = await score('', sandboxes);
        await outsideUntouched();
        assertRefused(v, 'tests/test_calc.py', /hard link/);
        assertHiddenRan(v);
      },
      { localOnly: true },
    );

    it('a test file the candidate made unreadable: reset to its start state, noted, failed', async () => {
      const sandboxes = afterPatch(gym!.sandboxes, async (sb) => {
        const r = await sb.exec('chmod 000 tests/conftest.py');
        assert.equal(r.exitCode, 0, r.stderr);
      });
      const patch = await patchOf((dir) => fs.writeFile(path.join(dir, 'tests/conftest.py'), 'import pytest\n'));
      const v = await score(patch, sandboxes);
      assert.equal(v.status, 'failed', show(v));
      assert.equal(v.error, undefined, show(v));
      assert.ok(v.notes.includes('test file reset to its start state: tests/conftest.py'), show(v));
      assertHiddenRan(v);
    });

    it(
      'files the agent made unreadable in its episode workspace: submit still ' +
        'takes the diff and scores it (a wrong answer), never an infrastructure error',
      async () => {
        const id = await startExample(gym!, 'inventory-discount-bug');
        const r = await gym!.callTool(
          'run_command',
          { command: 'echo secret > notes.txt && chmod 000 notes.txt && mkdir private && echo x > private/a.txt && chmod 000 private' },
          testContext(),
          id,
        );
        assert.equal((r.data as { exitCode: number }).exitCode, 0, r.text);
        const v = (await gym!.callTool('submit', {}, testContext(), id)).data as unknown as Verdict;
        assert.equal(v.status, 'failed', show(v));
        assert.equal(v.error, undefined, show(v));
        if (backend.name === 'docker')
          assert.ok(
            v.notes.some((n) => n.startsWith('CANDIDATE_FILE_REFUSED: notes.txt ')),
            show(v),
          );
      },
    );

    it('a failure of the harness itself stays an error: a sandbox that cannot start is SANDBOX_UNAVAILABLE', async () => {
      const broken: SandboxFactory = {
        backend: gym!.sandboxes.backend,
        prepare: (t) => gym!.sandboxes.prepare(t),
        close: async () => {},
        create: async () => {
          throw new GymError('SANDBOX_UNAVAILABLE', 'the engine is down');
        },
      };
      const v = await score('', broken);
      assert.equal(v.status, 'error', show(v));
      assert.equal(v.reward, 0);
      assert.equal(v.error?.code, 'SANDBOX_UNAVAILABLE');
    });

    it('a sandbox that dies after the patch is applied stays an error, not a wrong answer', async () => {
      const dying = afterPatch(gym!.sandboxes, async (sb) => {
        sb.exec = async () => {
          throw new GymError('SANDBOX_UNAVAILABLE', 'the sandbox container stopped', { sandboxLost: true });
        };
        sb.writeFile = async () => {
          throw new GymError('SANDBOX_UNAVAILABLE', 'the sandbox container stopped', { sandboxLost: true });
        };
      });
      const v = await score('', dying);
      assert.equal(v.status, 'error', show(v));
      assert.equal(v.error?.code, 'SANDBOX_UNAVAILABLE');
    });
  });
}
