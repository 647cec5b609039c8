/**
 * HumanEvo's own records (instance_id, repo, version, base_commit, brief and detailed
 * docstrings, dependency level) become tasks when their repositories are at hand; the
 * tasks they give are scoreable (the start state fails, the change's code passes).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { humanevoSuite, loadHumanEvo } from '../../../envs/humanevo/index.ts';
import { validateTask } from '../../../src/scoring/validate.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { expectGymError, makeGym, tempDir } from '../../helpers.ts';
import { buildPythonFixture } from './fixtures.ts';

let dir: string;
let reposDir: string;
let commits: Record<string, string>;

before(async () => {
  dir = await tempDir('benchgym-humanevo-format-');
  process.env.BENCHGYM_HUMANEVO_CACHE = path.join(dir, 'workspaces');
  reposDir = path.join(dir, 'repos');
  // The layout the fetch tool leaves: <owner>+<name>/repo.
  ({ commits } = await buildPythonFixture(path.join(reposDir, 'fixture+textkit', 'repo')));
});
after(() => fs.rm(dir, { recursive: true, force: true }));

async function write(records: object[]): Promise<string> {
  const file = path.join(dir, `humanevo-${Math.random().toString(36).slice(2)}.jsonl`);
  await fs.writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

const RECORD = () => ({
  instance_id: 'textkit-0001',
  repo: 'fixture/textkit',
  version: '0.1',
  base_commit: commits.initial,
  function_name: 'slugify',
  brief_docstring: 'Make a URL slug of a title.',
  detailed_docstring: 'Make a URL slug of a title: lower-case words of letters and digits, joined by sep.',
  dependency_level: 'Standalone',
  FAIL_TO_PASS: '["tests/test_strings.py::test_slugify"]',
  PASS_TO_PASS: ['tests/test_strings.py::test_shout'],
});

test('a HumanEvo record becomes a task: its docstrings, level and version; the change found from the base commit', async () => {
  const [task] = await loadHumanEvo(await write([RECORD()]), 'humanevo', { reposDir });
  assert.equal(task!.id, 'textkit-0001');
  assert.equal(task!.metadata.commit, commits.slugify);
  assert.equal(task!.metadata.baseCommit, commits.initial);
  assert.equal(task!.metadata.version, '0.1');
  assert.equal(task!.metadata.dependencyLevel, 'standalone');
  assert.equal(task!.metadata.docstringSource, 'repository');
  assert.match(task!.prompt, /joined by sep/);
  assert.match(task!.promptVariants.brief!, /Make a URL slug of a title\./);
  assert.deepEqual(task!.tests.failToPass, ['tests/test_strings.py::test_slugify']);
  assert.deepEqual(task!.tests.passToPass, ['tests/test_strings.py::test_shout']);
});

test("the adapted task scores: the stubbed start state fails, the change's own code passes", async () => {
  const registry = new SuiteRegistry([humanevoSuite({ reposDir })]);
  registry.enable(`humanevo=${await write([RECORD()])}`);
  const { gym, cleanup } = await makeGym({ registry });
  try {
    const [task] = await registry.tasks('humanevo');
    const v = await validateTask(gym, task!);
    assert.equal(v.status, 'valid', v.reasons.join('; '));
  } finally {
    await cleanup();
  }
});

test('records that cannot be placed are errors naming the record and what is missing', async () => {
  await expectGymError(
    loadHumanEvo(await write([{ ...RECORD(), repo: 'fixture/absent' }]), 'humanevo', { reposDir }),
    'ENV_UNAVAILABLE',
    /textkit-0001: no repository fixture\/absent/,
  );
  await expectGymError(
    loadHumanEvo(await write([{ ...RECORD(), function_name: 'nope' }]), 'humanevo', { reposDir }),
    'TASK_INVALID',
    /adds 0 functions matching nope/,
  );
  await expectGymError(
    loadHumanEvo(await write([{ ...RECORD(), base_commit: undefined }]), 'humanevo', { reposDir }),
    'TASK_INVALID',
    /records must all be/,
  );
  await expectGymError(
    loadHumanEvo(await write([{ instance_id: 'x', repo: 'fixture/textkit', base_commit: 42 }]), 'humanevo', { reposDir }),
    'TASK_INVALID',
    /records must all be/,
  );
});
