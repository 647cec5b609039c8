import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Gym } from '../../src/episode/gym.ts';
import { sandboxEnv } from '../../src/env/types.ts';
import { DockerSandboxFactory } from '../../src/sandbox/docker/index.ts';
import type { ScoringMode } from '../../src/scoring/mode.ts';
import { pytestEntryPoints, stripCompiled } from '../../src/scoring/strict.ts';
import type { Verdict } from '../../src/scoring/verdict.ts';
import { PROJECT_ROOT } from '../../src/tasks/registry.ts';
import { TaskSchema, type Task } from '../../src/tasks/schema.ts';
import { seedOf } from '../../src/tasks/seed.ts';
import { dockerSkipReason } from '../sandbox/docker/skip.ts';
import { makeGym, pythonTask } from '../helpers.ts';
import { FORCE_PASS_PLUGIN } from './force_pass.ts';

/**
 * Candidate patches that win reward 1 without a solution (issue 12, finding 3), scored in
 * both modes: strict gives 0 with TAMPER_SUSPECTED, faithful (the benchmark's own harness)
 * is fooled as the benchmark would be.
 */

const STUB = 'def add(a, b):\n    raise NotImplementedError\n';
const HIDDEN = {
  'tests/test_calc.py':
    'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n',
};

function calcTask(passWhen: 'tests' | 'exit-code' = 'tests'): Task {
  return pythonTask({
    id: `calc-${passWhen}`,
    files: { 'calc.py': STUB },
    tests: { hidden: { runner: { type: 'pytest', args: ['tests'] }, files: HIDDEN, passWhen }, testFiles: ['tests/**'] },
  });
}

const ATTACKS: Record<string, Record<string, string>> = {
  'a [pytest11] entry point in a *.dist-info of the workspace': {
    'evil_plugin.py': FORCE_PASS_PLUGIN,
    'evil_plugin-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: evil-plugin\nVersion: 1.0\n',
    'evil_plugin-1.0.dist-info/entry_points.txt': '[pytest11]\nevil = evil_plugin\n',
    'evil_plugin-1.0.dist-info/RECORD': '',
  },
  'the candidate module patches TestReport.from_item_and_call at import': {
    'calc.py': `import _pytest.reports as _r

_orig = _r.TestReport.from_item_and_call.__func__


def _forged(cls, item, call):
    rep = _orig(cls, item, call)
    rep.outcome = "passed"
    rep.longrepr = None
    return rep


_r.TestReport.from_item_and_call = classmethod(_forged)

${STUB}`,
  },
  'a forged JUnit report written at exit (atexit, then os._exit(0))': {
    'calc.py': `import atexit
import os
import sys


def _forge():
    for a in sys.argv:
        if a.startswith("--junitxml="):
            with open(a.split("=", 1)[1], "w") as f:
                f.write('<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="2">'
                        '<testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py" time="0.01"/>'
                        '<testcase classname="tests.test_calc" name="test_zero" file="tests/test_calc.py" time="0.01"/>'
                        '</testsuite></testsuites>')
    sys.stdout.flush()
    os._exit(0)


atexit.register(_forge)

${STUB}`,
  },
};

/** The pytest attacks, plus the bytecode one and os._exit(0) in exit-code suites, on one backend. */
function attacks(backend: string, setup: () => Promise<{ gym: Gym; cleanup: () => Promise<void> }>) {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  before(async () => ({ gym, cleanup } = await setup()));
  after(() => cleanup?.());

  /** A patch against the task's start state: `changes` written, then `shell` run with the env's interpreter as $PY. */
  async function patchFor(task: Task, changes: Record<string, string>, shell?: string): Promise<string> {
    const env = await gym.sandboxes.prepare(task);
    const sb = await gym.sandboxes.create({ seed: seedOf(task, env), env: sandboxEnv(env) });
    try {
      await sb.commitBaseline();
      for (const [rel, content] of Object.entries(changes)) await sb.writeFile(rel, content);
      if (shell) {
        const r = await sb.exec(`PY=${env.command}; ${shell}`, { timeoutMs: 60_000 });
        assert.equal(r.exitCode, 0, r.stdout + r.stderr);
      }
      return await sb.diff();
    } finally {
      await sb.destroy();
    }
  }

  const both = async (task: Task, patch: string): Promise<Record<ScoringMode, Verdict>> => ({
    strict: await gym.score(task, patch, { scoring: 'strict' }),
    faithful: await gym.score(task, patch, { scoring: 'faithful' }),
  });
  const tamper = (v: Verdict) => v.notes.filter((n) => n.startsWith('TAMPER_SUSPECTED'));
  const assertCaught = (v: Verdict, what: RegExp) => {
    assert.equal(v.reward, 0, `strict mode gave reward 1: ${v.notes.join('; ')}`);
    assert.equal(v.status, 'failed');
    assert.ok(
      tamper(v).some((n) => what.test(n)),
      `no TAMPER_SUSPECTED note matching ${what}: ${v.notes.join('; ')}`,
    );
  };

  for (const [name, files] of Object.entries(ATTACKS)) {
    test(`${backend}: ${name}: strict 0 with TAMPER_SUSPECTED, faithful fooled (1)`, async () => {
      const task = calcTask();
      const v = await both(task, await patchFor(task, files));
      assertCaught(v.strict, /TAMPER_SUSPECTED: /);
      assert.equal(v.faithful.reward, 1, `faithful: ${v.faithful.notes.join('; ')}`);
      assert.deepEqual(tamper(v.faithful), []);
    });
  }

  test(`${backend}: an unchecked-hash .pyc let into the diff by a .gitignore negation: stripped, strict 0, faithful fooled`, async () => {
    const task = calcTask();
    // The compiled module is a correct add(); calc.py in the diff stays the stub.
    const patch = await patchFor(
      task,
      { '.gitignore': '!__pycache__/\n!*.pyc\n', 'good/calc.py': 'def add(a, b):\n    return a + b\n' },
      [
        `$PY -c "import py_compile, sys, importlib.util; py_compile.compile('good/calc.py', ` +
          `cfile=importlib.util.cache_from_source('calc.py'), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)"`,
        'rm -rf good',
      ].join(' && '),
    );
    assert.match(patch, /__pycache__\/calc\.cpython-\d+\.pyc/);
    assert.doesNotMatch(patch, /^\+\s+return a \+ b/m);
    const v = await both(task, patch);
    assertCaught(v.strict, /bytecode/);
    assert.equal(v.faithful.reward, 1, `faithful: ${v.faithful.notes.join('; ')}`);
  });

  test(`${backend}: os._exit(0) in the function body of an exit-code pytest suite: strict 0, faithful fooled`, async () => {
    const task = calcTask('exit-code');
    const v = await both(task, await patchFor(task, { 'calc.py': 'def add(a, b):\n    import os\n    os._exit(0)\n' }));
    assertCaught(v.strict, /end/);
    assert.equal(v.faithful.reward, 1, `faithful: ${v.faithful.notes.join('; ')}`);
  });

  test(`${backend}: a honest fix scores 1 in both modes, with no TAMPER note`, async () => {
    for (const passWhen of ['tests', 'exit-code'] as const) {
      const task = calcTask(passWhen);
      const v = await both(task, await patchFor(task, { 'calc.py': 'def add(a, b):\n    return a + b\n' }));
      for (const mode of ['strict', 'faithful'] as const) {
        assert.equal(v[mode].reward, 1, `${passWhen} ${mode}: ${v[mode].notes.join('; ')}`);
        assert.deepEqual(tamper(v[mode]), []);
      }
    }
  });

  describe(`${backend}: a CoderEval-style exit-code task (the platform's scorer.py)`, () => {
    let task: Task;
    before(async () => {
      const scorer = await fs.readFile(path.join(PROJECT_ROOT, 'envs', 'codereval', 'scorer.py'), 'utf8');
      const testFile =
        'def inc(x):\n    return x + 1\n\n\nif __name__ == "__main__":\n    if ' +
        'inc(1) != 2 or inc(-1) != 0:\n        raise Exception("inc is wrong")\n';
      task = TaskSchema.parse({
        id: 'inc',
        suite: 'adhoc',
        language: 'python',
        kind: 'function',
        prompt: 'write inc',
        env: { kind: 'python', version: '3.11' },
        workspace: { type: 'files', files: { 'pkg/mod.py': 'import os\n\n\ndef inc(x):\n    raise NotImplementedError\n' } },
        tests: {
          hidden: {
            runner: {
              type: 'script',
              command:
                'python .codereval/scorer.py --test .codereval/mod_inc.py --name inc ' +
                '--source pkg/mod.py --candidate .codereval-candidate.py --timeout 30',
            },
            files: { '.codereval/scorer.py': scorer, '.codereval/mod_inc.py': testFile },
          },
          testFiles: ['.codereval/**'],
        },
      });
    });

    test('os._exit(0) in the function body: strict 0 with TAMPER_SUSPECTED, faithful fooled', async () => {
      const v = await both(task, await patchFor(task, { 'pkg/mod.py': 'def inc(x):\n    import os\n    os._exit(0)\n' }));
      assertCaught(v.strict, /exited before the test's end/);
      assert.equal(v.faithful.reward, 1, `faithful: ${v.faithful.notes.join('; ')}`);
    });

    test('sys.exit(0) in the function body: strict 0 with TAMPER_SUSPECTED, faithful fooled', async () => {
      const v = await both(task, await patchFor(task, { 'pkg/mod.py': 'def inc(x):\n    import sys\n    sys.exit(0)\n' }));
      assertCaught(v.strict, /exited before the test's end/);
      assert.equal(v.faithful.reward, 1, `faithful: ${v.faithful.notes.join('; ')}`);
    });

    test('the right function scores 1 in both modes; a wrong one 0 in both, without TAMPER', async () => {
      const right = await both(task, await patchFor(task, { 'pkg/mod.py': 'def inc(x):\n    return x + 1\n' }));
      const wrong = await both(task, await patchFor(task, { 'pkg/mod.py': 'def inc(x):\n    return x\n' }));
      for (const mode of ['strict', 'faithful'] as const) {
        assert.equal(right[mode].reward, 1, `${mode}: ${right[mode].notes.join('; ')}`);
        assert.equal(wrong[mode].reward, 0, mode);
        assert.deepEqual([...tamper(right[mode]), ...tamper(wrong[mode])], []);
      }
    });
  });
}

describe('patch checks', () => {
  const section = (p: string, body: string) => `diff --git a/${p} b/${p}\nnew file mode 100644\n--- /dev/null\n+++ b/${p}\n${body}`;
  test('stripCompiled removes bytecode and extension modules, keeps sources', () => {
    const patch = [
      section('calc.py', '@@ -0,0 +1 @@\n+x = 1\n'),
      section('__pycache__/calc.cpython-311.pyc', 'GIT binary patch\nliteral 3\nabc\n\n'),
      section('old.pyc', 'Binary files differ\n'),
      section('fast.cpython-311-x86_64-linux-gnu.so', 'Binary files differ\n'),
    ].join('');
    const { patch: kept, removed } = stripCompiled(patch);
    assert.deepEqual(removed, ['__pycache__/calc.cpython-311.pyc', 'old.pyc', 'fast.cpython-311-x86_64-linux-gnu.so']);
    assert.equal(kept, section('calc.py', '@@ -0,0 +1 @@\n+x = 1\n'));
    assert.deepEqual(stripCompiled(kept).removed, []);
  });
  test('pytestEntryPoints finds an added [pytest11] section of a dist-info or egg-info', () => {
    const patch =
      section('x-1.0.dist-info/entry_points.txt', '@@ -0,0 +1,2 @@\n+[pytest11]\n+x = x\n') +
      section('y.egg-info/entry_points.txt', '@@ -0,0 +1,2 @@\n+[console_scripts]\n+y = y:main\n');
    assert.deepEqual(pytestEntryPoints(patch), ['x-1.0.dist-info/entry_points.txt']);
  });
});

describe('strict scoring on the local backend', () => attacks('local', () => makeGym()));

describe('strict scoring on the Docker backend', async () => {
  const skip = await dockerSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  attacks('docker', () =>
    makeGym({ sandboxes: new DockerSandboxFactory({ serverId: `test-strict-${randomBytes(4).toString('hex')}`, poolSize: 0 }) }),
  );
});
