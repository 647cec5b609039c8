/**
 * The paper's two cases on the fixtures (Figure 1): in the evolving-aware start state,
 * retrieve_context finds the helpful look-alike that a later commit deletes and never the
 * near-copy a later commit adds; in the evolving-ignored one, the reverse. An aware
 * episode's git history ends at the change's parent.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { humanevoSuite, loadHumanEvo } from '../../../envs/humanevo/index.ts';
import { BUILT_FORMAT, type BuiltTaskInput } from '../../../envs/humanevo/record.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { expectGymError, makeGym, tempDir, testContext } from '../../helpers.ts';
import { buildJavaFixture } from './fixtures.ts';
import { buildFixture, type BuiltFixture } from './setup.ts';

async function gymFor(file: string): Promise<{ gym: Gym; cleanup: () => Promise<void> }> {
  const registry = new SuiteRegistry([humanevoSuite()]);
  registry.enable(`humanevo=${file}`);
  return makeGym({ registry });
}

async function start(gym: Gym, taskId: string, extra: Record<string, unknown> = {}): Promise<{ id: string; data: Record<string, any> }> {
  const r = await gym.callTool('start_episode', { task_id: taskId, ...extra }, testContext());
  return { id: (r.data as { episodeId: string }).episodeId, data: r.data };
}

async function retrieved(gym: Gym, id: string, k = 3): Promise<string[]> {
  const r = await gym.callTool('retrieve_context', { k }, testContext(), id);
  return (r.data.hits as { symbol: string | null }[]).map((h) => h.symbol ?? '(window)');
}

async function sh(gym: Gym, id: string, command: string): Promise<{ stdout: string; exitCode: number }> {
  const r = await gym.callTool('run_command', { command }, testContext(), id);
  return { stdout: String(r.data.stdout ?? ''), exitCode: Number(r.data.exitCode) };
}

describe('HumanEvo contexts on the Python fixture', () => {
  let f: BuiltFixture;
  let gym: Gym;
  let cleanup: () => Promise<void>;
  const task = () => f.records.find((r) => r.target.qualname === f.expect.retrieval.target)!.instance_id;

  before(async () => {
    // The first change is the target's: one task is enough here.
    f = await buildFixture('python', { limit: 1 });
    ({ gym, cleanup } = await gymFor(f.file));
  });
  after(async () => {
    await cleanup();
    await f.cleanup();
  });

  test('aware: retrieve_context returns the helper deleted later, never the copy added later, never the target', async () => {
    const { id, data } = await start(gym, task());
    assert.equal(data.context, 'aware');
    const hits = await retrieved(gym, id);
    assert.equal(hits[0], f.expect.retrieval.deletedHelper, hits.join(', '));
    assert.ok(!hits.includes(f.expect.retrieval.futureCopy));
    const all = await retrieved(gym, id, 50);
    assert.ok(!all.includes(f.expect.retrieval.futureCopy) && !all.includes(f.expect.retrieval.target), all.join(', '));
  });

  test('ignored: the reverse — the copy added later is found, the deleted helper is gone', async () => {
    const { id, data } = await start(gym, task(), { context: 'ignored' });
    assert.equal(data.context, 'ignored');
    assert.match(data.prompt, /newest version/);
    const hits = await retrieved(gym, id);
    assert.equal(hits[0], f.expect.retrieval.futureCopy, hits.join(', '));
    const all = await retrieved(gym, id, 50);
    assert.ok(!all.includes(f.expect.retrieval.deletedHelper) && !all.includes(f.expect.retrieval.target), all.join(', '));
    // No history at all in the ignored context (it would hold the answer), and no hidden test.
    assert.notEqual((await sh(gym, id, 'git log --all --oneline')).exitCode, 0);
    assert.equal((await sh(gym, id, 'test -e tests/test_strings.py')).exitCode, 1);
  });

  test(
    "aware: git log --all shows nothing after the change's parent; " + 'the change and later commits are not in the object store',
    async () => {
      const { id } = await start(gym, task());
      assert.deepEqual((await sh(gym, id, 'git log --all --format=%H')).stdout.trim().split('\n'), [f.commits.initial]);
      for (const cmd of ['git tag', 'git remote', 'git reflog', 'git stash list'])
        assert.equal((await sh(gym, id, cmd)).stdout.trim(), '', cmd);
      for (const later of [f.commits.slugify, f.commits.futureCopy, f.commits.deleteHelper]) {
        assert.notEqual((await sh(gym, id, `git cat-file -e ${later}`)).exitCode, 0, later);
      }
      // The change's production code is there as uncommitted work, with the target stubbed; its test edit is held back.
      assert.match((await sh(gym, id, 'git status --short')).stdout, /M textkit\/strings\.py/);
      assert.match(
        (await sh(gym, id, 'cat textkit/strings.py')).stdout,
        /def slugify\(title, sep="-"\):\n    """Turn a title[\s\S]*?"""\n    raise NotImplementedError/,
      );
      assert.doesNotMatch((await sh(gym, id, 'cat tests/test_strings.py')).stdout, /test_slugify/);
    },
  );

  test('prompt variants: detailed, brief, and the static contexts', async () => {
    const [t] = await loadHumanEvo(f.file);
    const v = t!.promptVariants;
    assert.match(v.detailed!, /separators at either end are dropped/);
    assert.doesNotMatch(v.brief!, /separators at either end/);
    assert.match(v.brief!, /Turn a title into a URL slug\./);
    assert.match(v.local!, /--- textkit\/strings\.py/);
    assert.match(v['local+sibling']!, /--- textkit\/bag\.py/);
    assert.doesNotMatch(v.local!, /--- textkit\/bag\.py/);
    // The ignored context renders its own prompts from the newest files: the future copy is in its local file.
    assert.match(t!.contexts.ignored!.promptVariants.local!, /def slugify_heading/);
    assert.doesNotMatch(v.local!, /def slugify_heading/);
    assert.equal(t!.metadata.dependencyLevel, 'standalone');
    const brief = await start(gym, task(), { prompt_variant: 'brief' });
    assert.equal(brief.data.prompt, v.brief);
  });

  test("docstrings from a file replace the repository's", async () => {
    const file = path.join(f.dir, 'with-docs.jsonl');
    await fs.copyFile(f.file, file);
    await fs.writeFile(
      path.join(f.dir, 'with-docs.docstrings.jsonl'),
      JSON.stringify({ instance_id: task(), brief: 'Make a slug.', detailed: 'Make a slug from a title: words joined by sep.' }) + '\n',
    );
    const [t] = await loadHumanEvo(file);
    assert.match(t!.promptVariants.brief!, /Make a slug\./);
    assert.match(t!.prompt, /words joined by sep/);
    assert.equal(t!.metadata.docstringSource, 'file');
  });

  test('an unknown context is an error naming the ones the task has', async () => {
    await expectGymError(
      gym.callTool('start_episode', { task_id: task(), context: 'future' }, testContext()),
      'INVALID_ARGUMENT',
      /'context': 'future' \(this task has aware, ignored\)/,
    );
  });
});

describe('HumanEvo contexts on the Java fixture', () => {
  let dir: string;
  let commits: Record<string, string>;
  let gym: Gym;
  let cleanup: () => Promise<void>;

  before(async () => {
    dir = await tempDir('benchgym-humanevo-java-');
    process.env.BENCHGYM_HUMANEVO_CACHE = path.join(dir, 'workspaces');
    const fx = await buildJavaFixture(path.join(dir, 'repo'));
    commits = fx.commits;
    // A record as build-tasks writes it (its test lists are not what is tested here: the start states are).
    const record: BuiltTaskInput = {
      format: BUILT_FORMAT,
      instance_id: 'java-slugify',
      repo: 'fixture/java',
      repo_path: fx.repo,
      language: 'java',
      commit: commits.slugify!,
      base_commit: commits.initial!,
      latest_commit: commits.deleteHelper!,
      date: '2024-01-01T02:00:00Z',
      target: {
        file: 'src/main/java/org/benchgym/fixture/Text.java',
        qualname: 'Text.slugify',
        name: 'slugify',
        cls: 'Text',
        lines: [25, 39],
      },
      signature: 'public static String slugify(String title, String sep)',
      docstring_detailed:
        'Turns a title into a URL slug.\nThe title is lowercased, runs of characters other than ' +
        'letters and digits\nbecome a single separator, and separators at either end are dropped.',
      docstring_brief: 'Turns a title into a URL slug.',
      dependency_level: 'standalone',
      test_files: ['src/test/java/org/benchgym/fixture/TextTest.java'],
      production_files: [{ status: 'M', path: 'src/main/java/org/benchgym/fixture/Text.java' }],
      fail_to_pass: ['org.benchgym.fixture.TextTest#slugify'],
      pass_to_pass: [],
      env: { kind: 'java', jdk: '17', build: 'maven' },
      test_runner: { type: 'maven', tests: [] },
    };
    const file = path.join(dir, 'tasks.jsonl');
    await fs.writeFile(file, JSON.stringify(record) + '\n');
    ({ gym, cleanup } = await gymFor(file));
  });
  after(async () => {
    await cleanup();
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('aware: the deleted helper, not the later copy; ignored: the reverse', async () => {
    const aware = await start(gym, 'java-slugify');
    const a = await retrieved(gym, aware.id);
    assert.equal(a[0], 'Text.normalizeTitle', a.join(', '));
    assert.ok(!(await retrieved(gym, aware.id, 50)).some((s) => s === 'Text.slugifyHeading' || s === 'Text.slugify'));
    const ignored = await start(gym, 'java-slugify', { context: 'ignored' });
    const i = await retrieved(gym, ignored.id);
    assert.equal(i[0], 'Text.slugifyHeading', i.join(', '));
    assert.ok(!(await retrieved(gym, ignored.id, 50)).some((s) => s === 'Text.normalizeTitle' || s === 'Text.slugify'));
  });

  test('aware: git log --all ends at the parent; the stub keeps the Javadoc and signature', async () => {
    const { id } = await start(gym, 'java-slugify');
    assert.deepEqual((await sh(gym, id, 'git log --all --format=%H')).stdout.trim().split('\n'), [commits.initial]);
    assert.notEqual((await sh(gym, id, `git cat-file -e ${commits.futureCopy}`)).exitCode, 0);
    const src = (await sh(gym, id, 'cat src/main/java/org/benchgym/fixture/Text.java')).stdout;
    assert.match(
      src,
      new RegExp(
        String.raw`\* Turns a title into a URL slug\.[\s\S]*?\*\/\n    public static String slugify\(String title, String ` +
          String.raw`sep\) \{\n\s+\/\/ TODO: implement\n\s+throw new UnsupportedOperationException`,
      ),
    );
    assert.match(src, /normalizeTitle/);
  });
});
