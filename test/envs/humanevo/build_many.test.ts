/**
 * `build-tasks --repos FILE --out-dir DIR`: several repositories mined in one run, two at a
 * time, each into its own task file with its own journal; the folder is a task set for the
 * suite; a repository that fails is reported and the others finish; --resume walks nothing
 * twice. The repositories are two ranges of the Python fixture's history (their tasks differ)
 * and a third entry whose revision does not exist.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { BUILTINS } from '../../../bin/builtins.ts';
import { buildTasksCmd } from '../../../envs/humanevo/build_tasks.ts';
import { readTargets } from '../../../envs/humanevo/build_many.ts';
import { loadHumanEvo } from '../../../envs/humanevo/index.ts';
import { main } from '../../../src/cli/main.ts';
import { expectGymError, TEST_CACHE_DIR, tempDir } from '../../helpers.ts';
import { buildPythonFixture } from './fixtures.ts';

let dir: string;
let fx: Awaited<ReturnType<typeof buildPythonFixture>>;
before(async () => {
  dir = await tempDir('benchgym-many-');
  process.env.BENCHGYM_HUMANEVO_CACHE = path.join(dir, 'workspaces');
  fx = await buildPythonFixture(path.join(dir, 'repo'));
});
after(() => fs.rm(dir, { recursive: true, force: true }));

async function writeRepos(entries: unknown): Promise<string> {
  const file = path.join(dir, `repos-${Math.random().toString(36).slice(2)}.json`);
  await fs.writeFile(file, JSON.stringify(entries));
  return file;
}

const lines = async (file: string) =>
  (await fs.readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

test(
  'several repositories in one run: a task file each, the report per repository, ' +
    'the folder served as one task set; a failing one is reported, the others finish',
  async () => {
    const out = path.join(dir, 'tasks');
    const repos = await writeRepos([
      { repo: fx.repo, name: 'early/textkit', language: 'python', python: '3.11', to: fx.commits.mostCommon },
      { repo: fx.repo, name: 'late/textkit', language: 'python', python: '3.11', from: fx.commits.mostCommon },
      { repo: fx.repo, name: 'broken/textkit', language: 'python', python: '3.11', from: 'no-such-revision' },
    ]);
    const code = await main(['build-tasks', '--repos', repos, '--out-dir', out, '--jobs', '2', '--cache-dir', TEST_CACHE_DIR], BUILTINS);
    assert.equal(code, 1, 'one repository failed');
    const names = async (f: string) => (await lines(path.join(out, f))).map((r) => r.target.qualname).sort();
    assert.deepEqual(await names('early__textkit.jsonl'), ['WordBag.most_common', 'slugify']);
    assert.deepEqual(await names('late__textkit.jsonl'), ['headline_slug']);
    assert.ok(existsSync(path.join(out, 'early__textkit.jsonl.progress.jsonl')));

    const report = JSON.parse(await fs.readFile(path.join(out, 'build-report.json'), 'utf8'));
    assert.equal(report.jobs, 2);
    assert.deepEqual(
      report.repos.map((r: { name: string; status: string }) => [r.name, r.status]),
      [
        ['early/textkit', 'done'],
        ['late/textkit', 'done'],
        ['broken/textkit', 'error'],
      ],
    );
    assert.match(report.repos[2].error.message, /no-such-revision/);
    assert.equal(report.validated, 3);
    assert.equal(report.repos[0].report.validated + report.repos[1].report.validated, 3);
    // The reasons add up over the repositories.
    const early: Record<string, number> = report.repos[0].report.rejected;
    const late: Record<string, number> = report.repos[1].report.rejected;
    assert.deepEqual(early, {});
    assert.equal(report.rejected.constructor, 1);
    for (const [k, v] of Object.entries(report.rejected)) {
      assert.equal(typeof v, 'number', k);
      assert.equal(v, (Object.hasOwn(early, k) ? early[k] : 0) + late[k], k);
    }

    // The folder is a task set: every repository's tasks (the failed one's empty file is passed over).
    const tasks = await loadHumanEvo(out);
    assert.deepEqual(
      tasks
        .map((t) =>
          t.id
            .split('/')
            .pop()!
            .replace(/^[0-9a-f]{10}-/, ''),
        )
        .sort(),
      ['WordBag.most_common', 'headline_slug', 'slugify'],
    );

    // --resume: nothing is walked again, the same tasks, no test run.
    const good = await writeRepos([
      { repo: fx.repo, name: 'early/textkit', language: 'python', python: '3.11', to: fx.commits.mostCommon },
      { repo: fx.repo, name: 'late/textkit', language: 'python', python: '3.11', from: fx.commits.mostCommon },
    ]);
    assert.equal(await main(['build-tasks', '--repos', good, '--out-dir', out, '--resume', '--cache-dir', TEST_CACHE_DIR], BUILTINS), 0);
    const again = JSON.parse(await fs.readFile(path.join(out, 'build-report.json'), 'utf8'));
    assert.equal(again.validated, 3);
    for (const r of again.repos) {
      assert.equal(r.report.resumed, r.report.walked, r.name);
      assert.equal(r.report.testRuns, 0, r.name);
    }
    assert.deepEqual(await names('early__textkit.jsonl'), ['WordBag.most_common', 'slugify']);
  },
);

test('a repository list is checked before anything runs: errors name the entry and its field', async () => {
  await expectGymError(readTargets(await writeRepos({ repo: fx.repo })), 'INVALID_ARGUMENT', /expected array/i);
  await expectGymError(readTargets(await writeRepos([])), 'INVALID_ARGUMENT', /at least one repository/);
  await expectGymError(readTargets(await writeRepos([{ repo: fx.repo, language: 'rust' }])), 'INVALID_ARGUMENT', /\[?0\]?\.?language/);
  await expectGymError(
    readTargets(await writeRepos([{ repo: fx.repo, language: 'java', python: '3.11' }])),
    'INVALID_ARGUMENT',
    /for Python repositories/,
  );
  await expectGymError(readTargets(await writeRepos([{ repo: fx.repo, language: 'python', colour: 'red' }])), 'INVALID_ARGUMENT', /colour/);
  await expectGymError(
    readTargets(await writeRepos([{ repo: path.join(dir, 'nope'), language: 'python' }])),
    'INVALID_ARGUMENT',
    /\[0\]\.repo: .*does not exist/,
  );
  await expectGymError(
    readTargets(
      await writeRepos([
        { repo: fx.repo, language: 'python' },
        { repo: fx.repo, language: 'python' },
      ]),
    ),
    'INVALID_ARGUMENT',
    /\[1\] and \[0\] would both write benchgym-many-\w+\.jsonl/,
  );
  const notJson = path.join(dir, 'bad.json');
  await fs.writeFile(notJson, '{');
  await expectGymError(readTargets(notJson), 'INVALID_ARGUMENT', /not a JSON file/);
  // The flags of one repository and of several do not mix.
  const repos = await writeRepos([{ repo: fx.repo, language: 'python' }]);
  await expectGymError(
    buildTasksCmd(['--repos', repos, '--out-dir', dir, '--language', 'python']),
    'INVALID_ARGUMENT',
    /--language is for one --repo/,
  );
  await expectGymError(buildTasksCmd(['--repos', repos]), 'INVALID_ARGUMENT', /--out-dir/);
  await expectGymError(
    buildTasksCmd(['--repo', fx.repo, '--language', 'python', '--out', 'x.jsonl', '--jobs', '2']),
    'INVALID_ARGUMENT',
    /--jobs is for --repos/,
  );
  await expectGymError(buildTasksCmd(['--repos', repos, '--out-dir', dir, '--jobs', '0']), 'INVALID_ARGUMENT', /--jobs/);
});
