import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { swebenchSuite, type RepoSpec } from '../../../envs/swebench/index.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { git } from '../../../src/repo/index.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, tempDir } from '../../helpers.ts';

/**
 * A Python SWE-bench instance is only another spec: the same reader, repository checkout,
 * harness steps and decision, with pytest node ids. Three pytest runs in the venv the
 * example suite already uses (Python 3.11, pytest).
 */
const SPECS: Record<string, Record<string, RepoSpec>> = {
  'acme/pyfix': {
    '*': { language: 'python', python: '3.11', requirements: [], pytestArgs: [], testFiles: ['tests/**'], timeoutMs: 120_000, edits: [] },
  },
};

describe('swe-bench-java: a Python instance through the same harness', () => {
  let root: string;
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let gold: string;
  before(async () => {
    root = await tempDir('benchgym-swebench-py-');
    const origin = path.join(root, 'origin');
    await fs.mkdir(path.join(origin, 'pyfix'), { recursive: true });
    await fs.mkdir(path.join(origin, 'tests'));
    const g = (args: string[]) => git(args, { cwd: origin });
    const commit = async (files: Record<string, string>, msg: string) => {
      for (const [rel, text] of Object.entries(files)) await fs.writeFile(path.join(origin, rel), text);
      await g(['add', '-A']);
      await g(['commit', '-q', '-m', msg]);
      return (await g(['rev-parse', 'HEAD'])).trim();
    };
    await g(['init', '-q', '-b', 'main']);
    const base = await commit(
      {
        'pyfix/__init__.py': '',
        'pyfix/words.py': 'def count(text):\n    return len(text.split(" "))\n',
        'tests/test_words.py': 'from pyfix.words import count\n\n\ndef test_simple():\n    assert count("one two three") == 3\n',
      },
      'base',
    );
    const fix = await commit(
      {
        'pyfix/words.py': 'def count(text):\n    return len(text.split())\n',
        'tests/test_words.py':
          'from pyfix.words import count\n\n\ndef test_simple():\n    assert count("one two ' +
          'three") == 3\n\n\ndef test_repeated_spaces():\n    assert count("one   two") == 2\n',
        'tests/test_edge.py': 'from pyfix.words import count\n\n\ndef test_empty():\n    assert count("") == 0\n',
      },
      'fix',
    );
    gold = await g(['diff', base, fix, '--', 'pyfix']);
    const reposDir = path.join(root, 'mirrors');
    await git(['clone', '-q', '--mirror', origin, path.join(reposDir, 'acme+pyfix.git')]);
    const dataset = path.join(root, 'data', 'py.jsonl');
    await fs.mkdir(path.dirname(dataset));
    await fs.writeFile(
      dataset,
      JSON.stringify({
        instance_id: 'acme__pyfix-1',
        repo: 'acme/pyfix',
        base_commit: base,
        patch: gold,
        test_patch: await g(['diff', base, fix, '--', 'tests']),
        problem_statement: 'count() miscounts repeated spaces and the empty string',
        FAIL_TO_PASS: ['tests/test_words.py::test_repeated_spaces', 'tests/test_edge.py'],
        PASS_TO_PASS: ['tests/test_words.py::test_simple'],
        version: '1',
      }) + '\n',
    );
    const registry = new SuiteRegistry([swebenchSuite({ reposDir, allowNetwork: false, specs: SPECS })]);
    registry.enable(`swe-bench-java=${dataset}`);
    ({ gym, cleanup } = await makeGym({ registry }));
  });
  after(async () => {
    await cleanup();
    await fs.rm(root, { recursive: true, force: true });
  });

  test('gold resolves; empty does not; a conftest.py that turns failures into passes is neutralised', { timeout: 5 * 60_000 }, async () => {
    const task = await gym.registry.task('swe-bench-java', 'acme__pyfix-1');
    assert.equal(task.language, 'python');
    assert.equal(task.metadata.spec, 'table');
    const v = await gym.score(task, gold);
    assert.equal(v.reward, 1, JSON.stringify(v));
    assert.deepEqual(v.failToPass, { passed: ['tests/test_words.py::test_repeated_spaces', 'tests/test_edge.py'], failed: [] });
    const empty = await gym.score(task, '');
    assert.equal(empty.reward, 0);
    assert.deepEqual(empty.passToPass, { passed: ['tests/test_words.py::test_simple'], failed: [] });
    const hook =
      'import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, ' +
      'call):\n    outcome = yield\n    outcome.get_result().outcome = "passed"\n';
    const tamper =
      `diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n--- /dev/null\n+++ b/conftest.py\n` +
      `@@ -0,0 +1,${hook.split('\n').length - 1} @@\n${hook
        .split('\n')
        .slice(0, -1)
        .map((l) => `+${l}`)
        .join('\n')}\n`;
    const tampered = await gym.score(task, tamper);
    assert.equal(tampered.reward, 0, JSON.stringify(tampered));
    assert.ok(
      tampered.notes.some((n) => n === 'TEST_INFRA_TAMPERING neutralised: conftest.py reset to its base version'),
      tampered.notes.join('; '),
    );
  });
});
